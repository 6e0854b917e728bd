// The request behind a change and who sent it, as the event log records them (server/events/outbox.ts).
import type { Request } from 'express';
import type { Account } from '../../accounts/keys.js';
import type { Actor, ChangeCause } from '../../db/owned.js';

/** The longest User-Agent an event keeps. */
export const MAX_USER_AGENT = 256;

/** A key id as the keys command lists it; a sandbox account's key has none. */
const KEY_ID = /^[0-9a-f]{12}$/;

/**
 * The actor of a request: its key's id, the client address as Express gives it after TRUST_PROXY (an IPv4
 * address mapped into IPv6 written as the IPv4 address it is), and its User-Agent, cut to MAX_USER_AGENT.
 */
export function requestActor(account: Account, req: Request): Actor {
  const ip = req.ip ?? null;
  const userAgent = req.get('user-agent');
  return {
    type: 'api_key',
    keyId: account.keyId !== undefined && KEY_ID.test(account.keyId) ? account.keyId : null,
    ip: ip === null ? null : (/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1] ?? ip),
    userAgent: userAgent ? userAgent.slice(0, MAX_USER_AGENT) : null,
  };
}

export function causeOf(requestId: string, actor: Actor, idempotencyKey?: string): ChangeCause {
  return { requestId, idempotencyKey: idempotencyKey ?? null, actor };
}
