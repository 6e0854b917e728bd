// Making, rotating and revoking API keys: one story for two entry points, the keys command (an operator: there
// is no caller to exceed) and /api-keys (a key managing its own account's keys, never beyond itself). Each
// change and its event (api_key.created, .rotated, .revoked: the record, never a secret or a hash) commit
// together.
import { nameProblem } from '../cli/terminal-text.js';
import type { Database } from '../db/database.js';
import { type ChangeCause, inTransaction } from '../db/owned.js';
import { type EventSubscriber, recordEvent } from '../events/outbox.js';
import { type KeyPolicy, missingScopes, parseInstant, parseRange, rangeList, type Scope } from './key-policy.js';
import {
  accountKeys,
  type IssuedKey,
  insertKey,
  type KeyListing,
  type KeyOptions,
  keyStatus,
  publicIdIn,
  type Rotation,
  revokeKeyOf,
  rotateKey,
} from './keys.js';

/** A key as the API and the key events show it (spec/components/schemas/api-key.yaml). */
export interface ApiKeyRecord {
  id: string;
  label: string | null;
  /** Stored as checked when the key was made (every name a scope of SCOPES). */
  scopes: Scope[] | null;
  status: ReturnType<typeof keyStatus>;
  expires_at: string | null;
  allowed_ips: string[] | null;
  created_at: string;
  last_used_at: string | null;
  replaced_by: string | null;
}

export function apiKeyRecord(key: KeyListing, now = Date.now()): ApiKeyRecord {
  return {
    id: key.publicId,
    label: key.label,
    scopes: key.scopes as Scope[] | null,
    status: keyStatus(key, now),
    expires_at: key.expiresAt,
    allowed_ips: key.allowedIps,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
    replaced_by: key.replacedBy,
  };
}

/** Where a key's change is told: who made it, and the event log's subscriber (the webhooks' fan-out). */
export interface KeyEvents {
  cause: ChangeCause;
  subscriber: EventSubscriber;
}

/** A field of a key's request at fault, named as the API names it. */
export interface KeyFieldError {
  field: 'label' | 'scopes' | 'expires_at' | 'allowed_ips';
  message: string;
}

/** What a key is asked to be, as sent (by the API's body, or the command's options once parsed). */
export interface KeyRequest {
  label?: string | null;
  scopes?: readonly string[];
  /** RFC 3339 text, as sent. */
  expiresAt?: string;
  allowedIps?: readonly string[];
}

/**
 * The options of a new key, or each field at fault: a label that would print unlike itself (control, invisible
 * or line-separator characters), a time that does not exist or is more than 10 years ahead (or past, unless
 * `allowPast`: the command issues an expired key for a test, and says so), a range whose meaning changes when
 * written another way.
 */
export function keyOptionsOf(
  request: KeyRequest,
  {
    allowPast = false,
    now = Date.now(),
    names = {},
  }: { allowPast?: boolean; now?: number; names?: Partial<Record<KeyFieldError['field'], string>> } = {},
): KeyOptions | { errors: KeyFieldError[] } {
  const errors: KeyFieldError[] = [];
  const name = (field: KeyFieldError['field']) => names[field] ?? field;
  const labelProblem = request.label ? nameProblem(request.label) : undefined;
  if (labelProblem) errors.push({ field: 'label', message: `${name('label')} ${labelProblem}.` });
  let expiresAt: Date | undefined;
  if (request.expiresAt !== undefined) {
    const ms = parseInstant(request.expiresAt, name('expires_at'), now);
    if (typeof ms !== 'number') errors.push({ field: 'expires_at', message: ms.error });
    else if (ms <= now && !allowPast) {
      errors.push({
        field: 'expires_at',
        message: `${name('expires_at')} must be in the future (got "${request.expiresAt}").`,
      });
    } else expiresAt = new Date(ms);
  }
  const ranges: string[] = [];
  for (const text of request.allowedIps ?? []) {
    const range = parseRange(text);
    if (typeof range === 'string') ranges.push(range);
    else errors.push({ field: 'allowed_ips', message: range.error });
  }
  if (errors.length > 0) return { errors };
  return {
    label: request.label ?? null,
    // As sent (the API answers what it was given; a scope named twice is held once).
    ...(request.scopes !== undefined ? { scopes: [...request.scopes] } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(request.allowedIps !== undefined ? { allowedIps: [...new Set(ranges)] } : {}),
  };
}

/** What the body leaves out is the caller's own: its scopes, its expiry, its address ranges. */
export function withCallersDefaults(caller: KeyPolicy | undefined, options: KeyOptions): KeyOptions {
  return {
    ...options,
    ...(options.scopes === undefined && caller?.scopes ? { scopes: [...caller.scopes].sort() } : {}),
    ...(options.expiresAt === undefined && caller?.expiresAt !== undefined
      ? { expiresAt: new Date(caller.expiresAt) }
      : {}),
    ...(options.allowedIps === undefined && caller?.allowedIps
      ? { allowedIps: caller.allowedIps.text.split(',').filter(Boolean) }
      : {}),
  };
}

/**
 * What a key with `options` would hold beyond the caller (no escalation), one sentence each: a scope the caller
 * lacks (every scope, for a key made without scopes), an expiry later than the caller's (or none, for a caller
 * that expires), an address range outside the caller's (or any address, for a caller bound to ranges).
 */
export function beyondCaller(caller: KeyPolicy | undefined, options: KeyOptions): string[] {
  const beyond: string[] = [];
  if (options.scopes === undefined) {
    if (caller?.scopes) beyond.push('scopes: every scope, while the calling key holds only some');
  } else {
    const missing = missingScopes(caller, options.scopes);
    if (missing.length > 0) beyond.push(`scopes: ${missing.join(', ')}, which the calling key lacks`);
  }
  if (caller?.expiresAt !== undefined) {
    const callerEnd = new Date(caller.expiresAt).toISOString();
    if (options.expiresAt === undefined) {
      beyond.push(`expires_at: never, while the calling key expires at ${callerEnd}`);
    } else if (options.expiresAt.getTime() > caller.expiresAt) {
      beyond.push(`expires_at: ${options.expiresAt.toISOString()}, later than the calling key's ${callerEnd}`);
    }
  }
  if (caller?.allowedIps) {
    if (options.allowedIps === undefined || options.allowedIps.length === 0) {
      beyond.push(`allowed_ips: any address, while the calling key is bound to ${caller.allowedIps.text}`);
    } else {
      const outside = options.allowedIps.filter((range) => !rangeInside(range, caller.allowedIps?.text ?? ''));
      if (outside.length > 0) {
        beyond.push(`allowed_ips: ${outside.join(', ')}, outside the calling key's ${caller.allowedIps.text}`);
      }
    }
  }
  return beyond;
}

/** Whether a range lies inside one of the normalised `ranges` (comma-separated). */
function rangeInside(range: string, ranges: string): boolean {
  // Normalised first: a key's row may hold a single address without its prefix.
  const normal = parseRange(range);
  if (typeof normal !== 'string') return false;
  const [address = '', prefix = ''] = normal.split('/');
  const bits = Number(prefix);
  return ranges
    .split(',')
    .filter(Boolean)
    .some((outer) => {
      const [, outerPrefix = ''] = outer.split('/');
      // Inside: no wider than the outer range, and its first address is in it (same family).
      return Number(outerPrefix) <= bits && addressInRange(address, outer);
    });
}

function addressInRange(address: string, range: string): boolean {
  const { list } = rangeList(range);
  const v6 = address.includes(':');
  return range.includes(':') === v6 && list.check(address, v6 ? 'ipv6' : 'ipv4');
}

/** The key's record as stored now (in `db`, a transaction's own view), or undefined; `unrevoked`: not if revoked. */
export async function keyRecord(db: Database, accountId: number, publicId: string, unrevoked = false) {
  const [key] = await accountKeys(db, accountId, { publicId, unrevoked });
  return key && apiKeyRecord(key);
}

/** Issues a key for the named account (made when new) and writes `api_key.created`, in one transaction. */
export async function createKey(
  db: Database,
  accountName: string,
  options: KeyOptions,
  events: KeyEvents,
): Promise<{ issued: IssuedKey; record: ApiKeyRecord }> {
  // In the transaction of an idempotent create when there is one.
  return inTransaction(db, async (trx) => {
    const issued = await insertKey(trx, accountName, options);
    const record = await created(trx, issued, events);
    return { issued, record };
  });
}

async function created(trx: Database, issued: IssuedKey, events: KeyEvents): Promise<ApiKeyRecord> {
  const record = (await keyRecord(trx, issued.account.id, issued.publicId)) as ApiKeyRecord;
  await recordEvent(
    trx,
    { accountId: issued.account.id, type: 'api_key.created', data: { object: record }, cause: events.cause },
    events.subscriber,
  );
  return record;
}

export type KeyRotation =
  | Exclude<Rotation, { rotated: IssuedKey }>
  | { rotated: IssuedKey; oldKeyExpiresAt: string; record: ApiKeyRecord; replaced: ApiKeyRecord };

/**
 * Rotates a key (keys.ts's rotateKey: one successor however many rotate at once), of `accountId` when given and
 * no further than `caller` may reach when given; writes `api_key.created` for the successor and `api_key.rotated`
 * for the old key, in the rotation's transaction.
 */
export async function rotate(
  db: Database,
  keyOrPublicId: string,
  overlapMs: number,
  events: KeyEvents,
  bounds: { accountId?: number; caller?: KeyPolicy } = {},
): Promise<KeyRotation> {
  const records: { record?: ApiKeyRecord; replaced?: ApiKeyRecord } = {};
  const result = await rotateKey(db, keyOrPublicId, overlapMs, {
    ...(bounds.accountId !== undefined ? { accountId: bounds.accountId } : {}),
    ...(bounds.caller !== undefined || bounds.accountId !== undefined
      ? { check: (successor: KeyOptions) => beyondCaller(bounds.caller, successor) }
      : {}),
    whenRotated: async (trx, { rotated, oldPublicId }) => {
      records.record = await created(trx, rotated, events);
      records.replaced = (await keyRecord(trx, rotated.account.id, oldPublicId)) as ApiKeyRecord;
      await recordEvent(
        trx,
        {
          accountId: rotated.account.id,
          type: 'api_key.rotated',
          data: { object: records.replaced, successor: records.record },
          cause: events.cause,
        },
        events.subscriber,
      );
    },
  });
  if (!('rotated' in result)) return result;
  return {
    rotated: result.rotated,
    oldKeyExpiresAt: result.oldKeyExpiresAt,
    record: records.record as ApiKeyRecord,
    replaced: records.replaced as ApiKeyRecord,
  };
}

/** Revokes an active key (of `accountId` when given) and writes `api_key.revoked`; its record, or undefined. */
export async function revoke(
  db: Database,
  keyOrPublicId: string,
  events: KeyEvents,
  accountId?: number,
): Promise<ApiKeyRecord | undefined> {
  return inTransaction(db, async (trx) => {
    const owner = await revokeKeyOf(trx, keyOrPublicId, accountId);
    if (owner === undefined) return undefined;
    const record = (await keyRecord(trx, owner, publicIdIn(keyOrPublicId))) as ApiKeyRecord;
    await recordEvent(
      trx,
      { accountId: owner, type: 'api_key.revoked', data: { object: record }, cause: events.cause },
      events.subscriber,
    );
    return record;
  });
}
