// Checks that run without anyone asking: every due domain (next_check_at in the past) is claimed by moving its
// next_check_at a lease ahead, in one statement (on PostgreSQL with FOR UPDATE SKIP LOCKED, so that instances
// never claim the same row), then looked up and its outcome applied. An instance that dies mid-check leaves the
// lease to run out, and another does the check. DNS queries are bounded by a token bucket per process.
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import type { Logger } from '../logger.js';
import { challengeName, inTestZone, type Observation, TEST_ZONE } from './check-rules.js';
import { type DomainChecks, TEST_ZONE_FOUND } from './checks.js';
import { applyCheck } from './states.js';
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

/** Runs one claimed check: the lookup (or the test zone's verdict) and its outcome. */
async function runCheck(db: Database, checks: DomainChecks, domain: { id: number; name: string }) {
  const result = inTestZone(domain.name)
    ? checks.sandbox
      ? TEST_ZONE_FOUND
      : TEST_ZONE_ELSEWHERE
    : await checks.lookup(challengeName(domain.name));
  await applyCheck(db, domain.id, result, checks.schedule);
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
  const { queriesPerSecond, leaseMs = 60_000, idleMs = 1000 } = settings;
  const bucket = new TokenBucket(queriesPerSecond);
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();

  const runDue = async () => {
    const claimed = await claimDueChecks(db, bucket.available(), leaseMs);
    bucket.take(claimed.length);
    const results = await Promise.allSettled(claimed.map((domain) => runCheck(db, checks, domain)));
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
