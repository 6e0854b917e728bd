// What an authenticated key may do: its expiry (401) and address ranges (403), checked as the key is accepted,
// and the scope each operation declares in the spec's `security` (403), a step of each operation's chain
// (api-routes.ts), so that the rule and the docs are one text; with it, the read scopes of the event types a
// request names. Every read-scope 403 is written here.
// Every fact comes with the cached key (server/accounts/keys.ts): no check reads the database.
import type { Request } from 'express';
import { addressAllowed, expired, type KeyPolicy, missingScopes } from '../../accounts/key-policy.js';
import type { Account } from '../../accounts/keys.js';
import { isEventType, missingToReceive, subscribable } from '../../events/read-scopes.js';
import { HttpProblem } from '../problems/problem.js';
import type { KeyedRequest, Step } from '../routing/request-context.js';
import type { Route } from '../routing/routes.js';
import { type KeyAcceptance, unauthorized } from './auth.js';

/** 401 for a key past its expiry (or its rotation's overlap), 403 for one used from outside its ranges. */
export const refuseByPolicy: KeyAcceptance = (account, req) => {
  const policy = account.policy;
  if (expired(policy) && policy?.expiresAt !== undefined) {
    const when = new Date(policy.expiresAt).toISOString();
    throw unauthorized(
      policy.replacedBy
        ? `The API key was replaced by key ${policy.replacedBy}, and its overlap ended at ${when}. Use the new key.`
        : `The API key expired at ${when}. Ask for a new one.`,
      true,
      'key-expired',
    );
  }
  // req.ip is worked out anew on each read (Express's trust proxy): only for a key that has ranges.
  if (policy?.allowedIps && !addressAllowed(policy, req.ip)) {
    throw new HttpProblem(
      'address-not-allowed',
      `This API key may not be used from ${req.ip ?? 'an unknown address'}: the address is outside the ranges it was issued for.`,
    );
  }
};

/** The 403 for a key without a scope the operation declares; `X-Accepted-Scopes` names what would do. */
export function insufficientScope(
  account: Account,
  declared: readonly string[],
  req: Request,
  template: string = req.path,
): HttpProblem | undefined {
  const missing = missingScopes(account.policy, declared);
  if (missing.length === 0) return undefined;
  const held = account.policy?.scopes;
  const operation = `${req.method} ${template}`;
  return new HttpProblem(
    'insufficient-scope',
    `This API key lacks the scope ${missing.join(' and ')}, which ${operation} needs. ` +
      `Its scopes: ${held ? (held.size > 0 ? [...held].sort().join(', ') : 'none') : 'every scope but api_keys:write, which a key holds only by name'}.`,
    { headers: { 'X-Accepted-Scopes': declared.join(', ') } },
  );
}

/**
 * The event types a request names, read as sent (the scope step runs before validation), and what asking for them
 * is: a subscription's `enabled_events` (an endpoint's create and update, JSON only) and the event log's `type`.
 * Only types the log knows count (and `*` in a subscription): any other value is the 422's to name. What a
 * request asks of a stored record (the event a redelivery sends, the types an endpoint takes when re-pointed or
 * recovered) is judged by its handler once it has read the record, through requireReadScopes below.
 */
type NamedTypes = (body: unknown, query: Record<string, unknown>) => { types: string[]; what: string } | undefined;

const subscribed =
  (doing: string): NamedTypes =>
  (body) => {
    const sent = (body as { enabled_events?: unknown } | undefined)?.enabled_events;
    if (!Array.isArray(sent)) return undefined;
    const types = sent.filter(
      (type): type is string => typeof type === 'string' && (type === '*' || subscribable(type)),
    );
    return types.length > 0 ? { types, what: `${doing} an endpoint receiving ${types.join(', ')}` } : undefined;
  };

const NAMED_TYPES: Readonly<Record<string, NamedTypes>> = {
  'webhook-endpoints_store': subscribed('creating'),
  'webhook-endpoints_update': subscribed('changing'),
  'webhook-endpoints_patch': subscribed('changing'),
  events_list: (_body, query) => {
    const type = query.type;
    return typeof type === 'string' && isEventType(type)
      ? { types: [type], what: `listing ${type} events` }
      : undefined;
  },
};

/**
 * The step of an operation's chain that checks the scopes its `security` requirement declares (the route table
 * reads them from the spec), then the read scopes of the event types the request names (NAMED_TYPES): after the
 * key and the body are read, before any field is judged, so a key that may not make the call learns that (403)
 * rather than what is wrong with its request (422).
 */
export function requireScopes(route: Route): Step<KeyedRequest, KeyedRequest> {
  const declared = route.operation.scopes;
  const named = NAMED_TYPES[route.operation.id];
  return (req, _res, known) => {
    const problem = declared.length > 0 ? insufficientScope(known.account, declared, req, route.template) : undefined;
    if (problem) throw problem;
    const asked = named?.(req.body, known.sent);
    const refused = asked && readScopeProblem(known.account.policy, asked.types, asked.what);
    if (refused) throw refused;
    return known;
  };
}

/**
 * 403 `insufficient-scope` unless the key may read the records of every one of `types` (`*`: all), by the one
 * rule of events/read-scopes.ts; `what` ends the sentence "…, which <what> needs". `X-Accepted-Scopes` names the
 * read scopes that would do.
 */
function readScopeProblem(
  policy: KeyPolicy | undefined,
  types: readonly string[],
  what: string,
): HttpProblem | undefined {
  const missing = missingToReceive(policy, types);
  if (missing.length === 0) return undefined;
  const held = policy?.scopes;
  return new HttpProblem(
    'insufficient-scope',
    `This API key lacks the scope ${missing.join(' and ')}, which ${what} needs: a key sees only the records ` +
      `it may read. Its scopes: ${held && held.size > 0 ? [...held].sort().join(', ') : 'none'}.`,
    { headers: { 'X-Accepted-Scopes': missing.join(', ') } },
  );
}

/**
 * The same 403 for what a request asks of a stored record (NAMED_TYPES says which): thrown by the handler once it
 * has read the record, as its 404 would be.
 */
export function requireReadScopes(policy: KeyPolicy | undefined, types: readonly string[], what: string): void {
  const problem = readScopeProblem(policy, types, what);
  if (problem) throw problem;
}
