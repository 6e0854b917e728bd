// Checks that run without anyone asking, as a job of the runner (server/jobs/runner.ts): due domains are claimed
// and checked by scheduled-check.ts's functions (fair between accounts, each claim a lease in next_check_at); the
// runner paces them, within a token bucket of DNS queries per process.
import type { Database } from '../db/database.js';
import type { EventSubscriber } from '../events/outbox.js';
import type { Job } from '../jobs/runner.js';
import { inSpan } from '../tracing.js';
import type { DomainChecks } from './checks.js';
import { ROUTING_QUERIES } from './routing-lookup.js';
import { type ClaimedCheck, claimDueChecks, runScheduledCheck } from './scheduled-check.js';
import { TokenBucket } from './token-bucket.js';

export interface SchedulerSettings {
  /** DNS queries per second this process may send for scheduled checks. */
  queriesPerSecond: number;
  /** How long a claimed check is reserved for this process before another may take it over. */
  leaseMs?: number;
  /** The wait between looks for due checks when none were due. */
  idleMs?: number;
}

/**
 * The scheduled checks as a job: claims what is due within the token bucket, looks each up and applies the
 * outcome; the events of a change go to `subscriber` (the configured fan-out, so its queue limit is the operator's).
 */
export function domainCheckJob(
  db: Database,
  checks: DomainChecks,
  settings: SchedulerSettings,
  subscriber: EventSubscriber,
): Job<ClaimedCheck> {
  const { queriesPerSecond, leaseMs = 60_000, idleMs = 1000 } = settings;
  const bucket = new TokenBucket(queriesPerSecond);
  // A check with routing sends its CNAME, A and AAAA queries beside the TXT one: it takes that many tokens (never
  // more than the bucket holds, so that a small DOMAIN_CHECK_QPS still checks).
  const cost = Math.min(queriesPerSecond, 1 + (checks.routing ? ROUTING_QUERIES : 0));
  return {
    name: 'domain checks',
    // The bucket paces the lookups; a slow answer holds its slot until DNS_TIMEOUT_S, so up to ten seconds' worth
    // may be in flight.
    concurrency: Math.min(1000, Math.max(1, Math.ceil(queriesPerSecond * 10))),
    // Checks fall due by the clock (a verify runs its own at once): the poll finds them.
    wakeOn: [],
    pollMs: idleMs,
    async claim(limit) {
      const claimed = await claimDueChecks(db, Math.min(limit, Math.floor(bucket.available() / cost)), leaseMs);
      bucket.take(claimed.length * cost);
      return claimed;
    },
    // A failure leaves the lease to run out, and the check is done again.
    run: (domain) =>
      inSpan('domain check', { attributes: { 'dss.domain.id': domain.id } }, () =>
        runScheduledCheck(db, checks, domain, subscriber),
      ),
    retryInMs: () => (bucket.available() < cost ? Math.max(bucket.msUntilNext(), 10) : undefined),
  };
}
