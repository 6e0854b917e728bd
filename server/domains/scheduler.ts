// Checks that run without anyone asking: due domains are claimed and checked by scheduled-check.ts's functions
// (fair between accounts, each claim a lease in next_check_at); this loop paces them. DNS queries are bounded by
// a token bucket per process.
import type { Database } from '../db/database.js';
import type { OutboxLimits } from '../events/outbox.js';
import type { Logger } from '../logger.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/settings.js';
import type { DomainChecks } from './checks.js';
import { claimDueChecks, runScheduledCheck } from './scheduled-check.js';
import { TokenBucket } from './token-bucket.js';

export { claimDueChecks } from './scheduled-check.js';

export interface SchedulerSettings {
  /** DNS queries per second this process may send for scheduled checks. */
  queriesPerSecond: number;
  /** How long a claimed check is reserved for this process before another may take it over. */
  leaseMs?: number;
  /** The wait between looks for due checks when none were due. */
  idleMs?: number;
  /** The event log's queue limit (WEBHOOK_MAX_QUEUE) for the events of state changes. */
  outbox?: OutboxLimits;
}

export interface Scheduler {
  /** Claims and runs the checks due now, within the bucket; resolves with how many ran. */
  runDue(): Promise<number>;
  /** Stops looking for due checks and waits for the running ones. */
  stop(): Promise<void>;
}

export function startScheduler(
  db: Database,
  checks: DomainChecks,
  settings: SchedulerSettings,
  logger: Logger,
): Scheduler {
  const { queriesPerSecond, leaseMs = 60_000, idleMs = 1000, outbox = DEFAULT_WEBHOOK_SETTINGS } = settings;
  const bucket = new TokenBucket(queriesPerSecond);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const runDue = async () => {
    const claimed = await claimDueChecks(db, bucket.available(), leaseMs);
    bucket.take(claimed.length);
    const results = await Promise.allSettled(claimed.map((domain) => runScheduledCheck(db, checks, domain, outbox)));
    for (const failed of results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')) {
      // The lease runs out and the check is done again; a database fault is logged, not fatal.
      logger.warn('domain check failed', { error: String(failed.reason) });
    }
    return claimed.length;
  };

  const tick = () => {
    running = runDue()
      .catch((error: unknown) => {
        logger.warn('claiming due domain checks failed', { error: String(error) });
        return 0;
      })
      .then((ran) => {
        if (stopped) return;
        const wait = ran > 0 ? Math.max(bucket.msUntilNext(), 10) : idleMs;
        timer = setTimeout(tick, wait);
        timer.unref();
      });
  };
  timer = setTimeout(tick, 0);
  timer.unref();

  return {
    runDue,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
