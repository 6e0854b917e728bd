// Verify a domain now, as one story: find it and count the verify against its limit (one transaction), look its
// record up, apply what the lookup saw. POST /domains/{id}/verify (handlers.ts) only calls it and maps the
// outcome to an answer; the scheduled check (scheduled-check.ts) runs the same look-up and apply after its claim.
import type { Database } from '../db/database.js';
import type { ChangeCause } from '../db/owned.js';
import type { EventSubscriber } from '../events/outbox.js';
import type { Quota } from '../quota.js';
import { countVerifyOf, type DomainChecks, lookUp, lookUpRouting, targetsOf } from './checks.js';
import type { DomainRow } from './repository.js';
import { applyCheck } from './states.js';

export type VerifyOutcome =
  /** Checked: the domain as the check left it. */
  | { kind: 'checked'; domain: DomainRow }
  /** The account has no such domain (or it was deleted while being checked). */
  | { kind: 'not-found' }
  /** The domain's verifies are spent for this window. */
  | { kind: 'rate-limited'; retryAfterSeconds: number; quota: Quota };

export interface VerifyRequest {
  accountId: number;
  id: number;
  cause: ChangeCause;
}

export async function verifyDomain(
  db: Database,
  checks: DomainChecks,
  { accountId, id, cause }: VerifyRequest,
  subscriber: EventSubscriber,
): Promise<VerifyOutcome> {
  const counted = await countVerifyOf(db, accountId, id, checks.verifyQuota);
  if (!counted) return { kind: 'not-found' };
  if ('retryAfterSeconds' in counted) {
    const quota = checks.verifyQuota ?? { limit: 0, windowSeconds: 0 };
    return { kind: 'rate-limited', retryAfterSeconds: counted.retryAfterSeconds, quota };
  }
  // The ownership record and the routing are looked up together, through the same servers and limits.
  const [result, routing] = await Promise.all([lookUp(checks, counted.name), lookUpRouting(checks, counted.name)]);
  const domain = await applyCheck(db, id, { result, routing }, checks.schedule, new Date(), {
    cause,
    subscriber,
    targets: targetsOf(checks),
  });
  return domain ? { kind: 'checked', domain } : { kind: 'not-found' };
}
