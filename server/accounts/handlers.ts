// HTTP handlers of /api-keys: the calling key, the account's keys, and making, rotating and revoking them
// through key-management.ts (the story the keys command tells too), never beyond the calling key.
import type { Database } from '../db/database.js';
import type { EventSubscriber } from '../events/outbox.js';
import { nextLink, readIdCursor } from '../http/conventions/id-cursor.js';
import { fieldProblem, HttpProblem, notFound, validationProblem } from '../http/problems/problem.js';
import type { Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import {
  type ApiKeyRecord,
  apiKeyRecord,
  beyondCaller,
  createKey,
  type KeyFieldError,
  keyOptionsOf,
  keyRecord,
  revoke,
  rotate,
  withCallersDefaults,
} from './key-management.js';
import { parseDuration, type Scope } from './key-policy.js';
import type { Account } from './keys.js';
import { accountKeys } from './keys.js';

export type ApiKeyOperation =
  | 'api-keys_current'
  | 'api-keys_show'
  | 'api-keys_list'
  | 'api-keys_store'
  | 'api-keys_rotate'
  | 'api-keys_delete';

const notAKey = (id: string) => notFound('API key', id);

/** The 403 of a key that would exceed its caller, naming each field and what it would exceed. */
function escalation(beyond: string[]) {
  return fieldProblem(
    'key-escalation',
    beyond.map((sentence) => ({
      location: 'body' as const,
      field: sentence.slice(0, sentence.indexOf(':')),
      message: sentence,
    })),
    `A key may not hold more than the key that makes it: ${beyond.join('; ')}.`,
  );
}

/**
 * A key with no row of its own (a sandbox key, made up by its holder): shown as key 000000000000, with the
 * scopes its token names (null: every scope but api_keys:write), never expiring.
 */
function sandboxKey(account: Account): ApiKeyRecord {
  const scopes = account.policy?.scopes;
  return {
    id: '000000000000',
    label: 'sandbox',
    scopes: scopes ? ([...scopes].sort() as Scope[]) : null,
    status: 'active',
    expires_at: null,
    allowed_ips: null,
    created_at: new Date(0).toISOString(),
    last_used_at: null,
    replaced_by: null,
  };
}

const bodyErrors = (errors: KeyFieldError[]) =>
  validationProblem(errors.map((error) => ({ location: 'body' as const, ...error })));

export function apiKeyHandlers(db: Database, fanOut: EventSubscriber): Pick<Handlers, ApiKeyOperation> {
  return {
    async 'api-keys_current'({ account }) {
      const record = account.keyId ? await keyRecord(db, account.id, account.keyId, true) : sandboxKey(account);
      // A key revoked meanwhile (its cache entry lives on for at most KEY_CACHE_TTL_MS).
      if (!record) throw notAKey(account.keyId ?? 'current');
      return { status: 200, body: { data: record } };
    },

    async 'api-keys_show'({ account, path }) {
      const record = await keyRecord(db, account.id, path.id, true);
      if (!record) throw notAKey(path.id);
      return { status: 200, body: { data: record } };
    },

    async 'api-keys_list'({ account, query, url }) {
      const before = readIdCursor(query.after as string | undefined);
      const search = (query.search as string | undefined) || undefined;
      const keys = await accountKeys(db, account.id, {
        limit: query.per_page,
        before,
        unrevoked: true,
        ...(search ? { search } : {}),
      });
      return {
        status: 200,
        body: {
          data: keys.map((key) => apiKeyRecord(key)),
          links: { next: nextLink(url, keys, query.per_page) },
        },
      };
    },

    async 'api-keys_store'({ account, body, headers, requestId, actor }) {
      const options = keyOptionsOf({
        label: body.label,
        ...(body.scopes !== undefined ? { scopes: body.scopes } : {}),
        ...(body.expires_at !== undefined ? { expiresAt: body.expires_at } : {}),
        ...(body.allowed_ips !== undefined ? { allowedIps: body.allowed_ips } : {}),
      });
      if ('errors' in options) throw bodyErrors(options.errors);
      const wanted = withCallersDefaults(account.policy, options);
      const beyond = beyondCaller(account.policy, wanted);
      if (beyond.length > 0) throw escalation(beyond);
      const cause = causeOf(requestId, actor, headers['Idempotency-Key']);
      const { issued, record } = await createKey(db, account.name, wanted, { cause, subscriber: fanOut });
      return { status: 201, body: { data: record, secret: issued.key }, savedBody: { data: record, secret: null } };
    },

    async 'api-keys_rotate'({ account, path, body, requestId, actor }) {
      const overlap = parseDuration(body.overlap ?? '24h', 'overlap');
      if (typeof overlap !== 'number') {
        throw validationProblem([{ location: 'body', field: 'overlap', message: overlap.error }]);
      }
      const events = { cause: causeOf(requestId, actor), subscriber: fanOut };
      const result = await rotate(db, path.id, overlap, events, { accountId: account.id, caller: account.policy });
      if ('rotated' in result) {
        return { status: 200, body: { data: result.record, secret: result.rotated.key, replaced: result.replaced } };
      }
      // A revoked key has left the API, as an unknown one.
      if (result.refused === 'unknown' || result.refused === 'revoked') throw notAKey(path.id);
      if (result.refused === 'exceeds') throw escalation(result.exceeds);
      const said = {
        expired: `Key ${path.id} expired at ${result.detail}; make a new key instead.`,
        rotated: `Key ${path.id} was rotated already: key ${result.detail} replaces it.`,
      };
      throw new HttpProblem('conflict', said[result.refused]);
    },

    async 'api-keys_delete'({ account, path, requestId, actor }) {
      const events = { cause: causeOf(requestId, actor), subscriber: fanOut };
      if (!(await revoke(db, path.id, events, account.id))) throw notAKey(path.id);
      return { status: 204 };
    },
  };
}
