// Checks that run without anyone asking, a job of the runner (server/jobs/runner.ts): every due domain
// (next_check_at in the past) is claimed by moving its next_check_at a lease ahead, in one statement (on PostgreSQL
// with FOR UPDATE SKIP LOCKED, so that instances never claim the same row), then looked up and its outcome
// applied. An instance that dies mid-check leaves the lease to run out, and another does the check. DNS queries
// are bounded by a token bucket per process.
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import type { EventSubscriber } from '../events/outbox.js';
import type { Job } from '../jobs/runner.js';
import { challengeName, inTestZone, type Observation, TEST_ZONE } from './check-rules.js';
import { type DomainChecks, TEST_ZONE_FOUND } from './checks.js';
import { applyCheck, SCHEDULED_CAUSE } from './states.js';
import { TokenBucket } from './token-bucket.js';

export interface SchedulerSettings {
  /** DNS queries per second this process may send for scheduled checks. */
  queriesPerSecond: number;
  /** How long a claimed check is reserved for this process before another may take it over. */
  leaseMs?: number;
  /** The wait between looks for due checks when none were due. */
  idleMs?: number;
}

/** A test-zone name outside the sandbox: never looked up, never proven. */
const TEST_ZONE_ELSEWHERE: Observation = {
  code: 'missing',
  message: `A name under ${TEST_ZONE}, the sandbox's test zone: such names verify only in the sandbox.`,
  values: [],
};

/** Claims up to `limit` due checks for this process; returns the claimed domains' ids and names. */
export async function claimDueChecks(db: Database, limit: number, leaseMs: number, now = new Date()) {
  if (limit <= 0) return [];
  let due = db
    .selectFrom('domains')
    .select('id')
    .where('next_check_at', '<=', now.toISOString())
    .orderBy('next_check_at')
    .limit(limit);
  if (engineOf(db) === 'postgres') due = due.forUpdate().skipLocked();
  const rows = await db
    .updateTable('domains')
    .set({ next_check_at: new Date(now.getTime() + leaseMs).toISOString() })
    .where('id', 'in', due)
    .returning(['id', 'name'])
    .execute();
  return rows.map((row) => ({ id: Number(row.id), name: row.name }));
}

/** Runs one claimed check: the lookup (or the test zone's verdict) and its outcome, its events to `subscriber`. */
async function runCheck(
  db: Database,
  checks: DomainChecks,
  subscriber: EventSubscriber,
  domain: { id: number; name: string },
) {
  const result = inTestZone(domain.name)
    ? checks.sandbox
      ? TEST_ZONE_FOUND
      : TEST_ZONE_ELSEWHERE
    : await checks.lookup(challengeName(domain.name));
  await applyCheck(db, domain.id, result, checks.schedule, new Date(), { cause: SCHEDULED_CAUSE, subscriber });
}

/**
 * The scheduled checks as a job of the runner (server/jobs/runner.ts): claims what is due within the token bucket,
 * looks each up and applies the outcome; the events of a change go to `subscriber` (the configured fan-out).
 */
export function domainCheckJob(
  db: Database,
  checks: DomainChecks,
  settings: SchedulerSettings,
  subscriber: EventSubscriber,
): Job<{ id: number; name: string }> {
  const { queriesPerSecond, leaseMs = 60_000, idleMs = 1000 } = settings;
  const bucket = new TokenBucket(queriesPerSecond);
  return {
    name: 'domain checks',
    concurrency: Math.max(1, Math.ceil(queriesPerSecond)),
    // Checks fall due by the clock (a verify runs its own at once): the poll finds them.
    wakeOn: [],
    pollMs: idleMs,
    async claim(limit) {
      const claimed = await claimDueChecks(db, Math.min(limit, bucket.available()), leaseMs);
      bucket.take(claimed.length);
      return claimed;
    },
    // A failure leaves the lease to run out, and the check is done again.
    run: (domain) => runCheck(db, checks, subscriber, domain),
    retryInMs: () => (bucket.available() < 1 ? Math.max(bucket.msUntilNext(), 10) : undefined),
  };
}
