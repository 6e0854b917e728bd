// `npm run bench:domain-checks`: scheduled domain checks against a real Knot server on 127.0.0.1, on a fresh
// SQLite file, through the scheduled-check job on the job runner (claims, lookups, transitions). Two scenarios:
//
// - `fairness` (the default): a quiet account's checks while a noisy account has NOISY (1,000) claims whose zone
//   answers SERVFAIL. The quiet account's QUIET (10) active domains are due every INTERVAL_S (5) seconds; the
//   noisy claims expire after EXPIRY_S (20). For DURATION_S (60) seconds at QPS (20) queries a second, it records
//   every lookup, and prints the quiet account's checks, the gaps between two checks of one quiet domain (p50,
//   max), the 5-second windows in which it got none, and what became of the noisy claims.
// - `cost` (SCENARIO=cost): what the schedule costs for DOMAINS (10,000) domains, half with their record
//   published, each checked once at up to QPS (2,000): queries, and the process's CPU per check.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { wakeupsOf } from '../../server/db/wakeups.js';
import { type CheckSchedule, DEFAULT_SCHEDULE, type LookupResult } from '../../server/domains/check-rules.js';
import type { DomainChecks } from '../../server/domains/checks.js';
import { domainRepository } from '../../server/domains/repository.js';
import { domainCheckJob } from '../../server/domains/scheduler.js';
import { txtLookup } from '../../server/domains/txt-lookup.js';
import { eventLog } from '../../server/events/outbox.js';
import { startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { BROKEN_ZONE, type KnotServer, startKnot, ZONE } from '../../test/support/knot.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const SCENARIO = process.env.SCENARIO ?? 'fairness';
const NO_CAUSE = SYSTEM_CAUSE;

async function countRows(db: Database, where: (q: ReturnType<typeof base>) => ReturnType<typeof base>) {
  const row = await where(base(db))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
const base = (db: Database) => db.selectFrom('domains');

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0);

async function fairness(db: Database, knot: KnotServer) {
  const NOISY = env('NOISY', 1000);
  const QUIET = env('QUIET', 10);
  const DURATION_S = env('DURATION_S', 60);
  const QPS = env('QPS', 20);
  const INTERVAL_S = env('INTERVAL_S', 5);
  const EXPIRY_S = env('EXPIRY_S', 20);
  const schedule: CheckSchedule = {
    ...DEFAULT_SCHEDULE,
    activeIntervalMs: INTERVAL_S * 1000,
    misconfiguredIntervalMs: INTERVAL_S * 1000,
    pendingFirstMs: 0,
    pendingMaxMs: INTERVAL_S * 1000,
    pendingExpiryMs: EXPIRY_S * 1000,
    retryMs: INTERVAL_S * 1000,
  };
  const { account: noisy } = await issueKey(db, 'noisy');
  const { account: quiet } = await issueKey(db, 'quiet');
  const repository = domainRepository(db, schedule, eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)));
  const quietNames = new Set<string>();
  const published: string[] = [];
  for (let i = 0; i < QUIET; i++) {
    const domain = { name: `quiet-${i}.${ZONE}`, index_page: null, not_found_page: null };
    const { record } = await repository.create(quiet.id, domain, NO_CAUSE);
    quietNames.add(record.verification.name);
    published.push(`update add ${record.verification.name}. 60 TXT "${record.verification.value}"`);
  }
  await knot.update(published);
  // Active, checked every INTERVAL_S: as if verified just now.
  const now = new Date();
  await db
    .updateTable('domains')
    .set({ status: 'active', state_since: now.toISOString(), next_check_at: now.toISOString() })
    .where('account_id', '=', quiet.id)
    .execute();
  for (let i = 0; i < NOISY; i++) {
    const domain = { name: `noisy-${i}.${BROKEN_ZONE}`, index_page: null, not_found_page: null };
    await repository.create(noisy.id, domain, NO_CAUSE);
  }
  await db
    .updateTable('domains')
    .set({ state_since: now.toISOString(), next_check_at: now.toISOString() })
    .where('account_id', '=', noisy.id)
    .execute();

  const lookup = txtLookup({ servers: [knot.address], timeoutMs: 2000, tries: 2 });
  const started = performance.now();
  const quietChecks = new Map<string, number[]>();
  let noisyLookups = 0;
  const checks: DomainChecks = {
    schedule,
    lookup: (name: string): Promise<LookupResult> => {
      const at = performance.now() - started;
      if (quietNames.has(name)) quietChecks.set(name, [...(quietChecks.get(name) ?? []), at]);
      else noisyLookups++;
      return lookup(name);
    },
    verifyQuota: undefined,
    sandbox: false,
  };
  const cpu = process.cpuUsage();
  const scheduler = startJobs(
    [domainCheckJob(db, checks, { queriesPerSecond: QPS }, webhookFanOut(DEFAULT_WEBHOOK_SETTINGS))],
    { db, wakeups: wakeupsOf(db), logger: createLogger('silent') },
  );
  await new Promise((resolve) => setTimeout(resolve, DURATION_S * 1000));
  await scheduler.stop();
  const used = process.cpuUsage(cpu);
  lookup.close();

  const gaps: number[] = [];
  const times: number[] = [];
  for (const at of quietChecks.values()) {
    times.push(...at);
    // From the start (every domain was due then) to the first check, then between checks, then to the end.
    const points = [0, ...at, DURATION_S * 1000];
    for (let i = 1; i < points.length; i++) gaps.push((points[i] ?? 0) - (points[i - 1] ?? 0));
  }
  for (let i = quietChecks.size; i < QUIET; i++) gaps.push(DURATION_S * 1000);
  gaps.sort((a, b) => a - b);
  const windows = Math.floor(DURATION_S / 5);
  let emptyWindows = 0;
  for (let w = 0; w < windows; w++) {
    if (!times.some((t) => t >= w * 5000 && t < (w + 1) * 5000)) emptyWindows++;
  }
  const noisyStates = await db
    .selectFrom('domains')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('account_id', '=', noisy.id)
    .groupBy('status')
    .execute();
  const stillDue = await countRows(db, (q) => q.where('next_check_at', '<', new Date(Date.now() - 1000).toISOString()));
  return {
    scenario: 'fairness',
    noisy_claims: NOISY,
    quiet_domains: QUIET,
    duration_s: DURATION_S,
    qps: QPS,
    interval_s: INTERVAL_S,
    expiry_s: EXPIRY_S,
    quiet_checks: times.length,
    quiet_checks_expected: Math.floor((DURATION_S / INTERVAL_S) * QUIET),
    quiet_gap_p50_s: +(percentile(gaps, 0.5) / 1000).toFixed(1),
    quiet_gap_max_s: +((gaps.at(-1) ?? 0) / 1000).toFixed(1),
    windows_of_5s_without_a_quiet_check: `${emptyWindows} of ${windows}`,
    noisy_lookups: noisyLookups,
    noisy_lookups_per_s: +(noisyLookups / DURATION_S).toFixed(1),
    noisy_states: Object.fromEntries(noisyStates.map((s) => [s.status, Number(s.n)])),
    still_due_waiting_for_the_bucket_at_the_end: stillDue,
    cpu_s: +((used.user + used.system) / 1e6).toFixed(1),
  };
}

async function cost(db: Database, knot: KnotServer) {
  const DOMAINS = env('DOMAINS', 10_000);
  const QPS = env('QPS', 2_000);
  const { account } = await issueKey(db, 'bench');
  const repository = domainRepository(
    db,
    { ...DEFAULT_SCHEDULE, pendingFirstMs: 0 },
    eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)),
  );
  const published: string[] = [];
  for (let i = 0; i < DOMAINS; i++) {
    const domain = { name: `d${i}.${ZONE}`, index_page: null, not_found_page: null };
    const { record } = await repository.create(account.id, domain, NO_CAUSE);
    if (i % 2 === 0) published.push(`update add ${record.verification.name}. 60 TXT "${record.verification.value}"`);
  }
  // One dynamic update per 500 records (a DNS message has room for a few hundred).
  for (let i = 0; i < published.length; i += 500) await knot.update(published.slice(i, i + 500));

  const lookup = txtLookup({ servers: [knot.address], timeoutMs: 2000, tries: 3 });
  let queries = 0;
  const checks: DomainChecks = {
    schedule: DEFAULT_SCHEDULE,
    // Counts the queries the scheduler sends through the real resolver.
    lookup: (name: string): Promise<LookupResult> => {
      queries++;
      return lookup(name);
    },
    verifyQuota: undefined,
    sandbox: false,
  };
  const scheduler = startJobs(
    [domainCheckJob(db, checks, { queriesPerSecond: QPS }, webhookFanOut(DEFAULT_WEBHOOK_SETTINGS))],
    { db, wakeups: wakeupsOf(db), logger: createLogger('silent') },
  );
  const cpu = process.cpuUsage();
  const started = performance.now();
  // The scheduler's loop runs by itself; wait until every domain has been checked once.
  while ((await countRows(db, (q) => q.where('last_checked_at', 'is', null))) > 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const elapsedMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await scheduler.stop();
  lookup.close();
  const cpuMs = (used.user + used.system) / 1000;
  const states = await db
    .selectFrom('domains')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('status')
    .execute();
  const perCheckMs = cpuMs / DOMAINS;
  return {
    scenario: 'cost',
    domains: DOMAINS,
    queries,
    elapsed_s: +(elapsedMs / 1000).toFixed(1),
    cpu_s: +(cpuMs / 1000).toFixed(2),
    cpu_ms_per_check: +perCheckMs.toFixed(3),
    states: Object.fromEntries(states.map((s) => [s.status, Number(s.n)])),
    // At the default schedule, with every domain active: one check an hour each.
    active_per_hour: {
      queries: DOMAINS,
      queries_per_second: +(DOMAINS / 3600).toFixed(2),
      cpu_s: +((perCheckMs * DOMAINS) / 1000).toFixed(1),
    },
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-checks-'));
  const knot = await startKnot();
  const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
  try {
    await migrateToLatest(db);
    const result = SCENARIO === 'cost' ? await cost(db, knot) : await fairness(db, knot);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await db.destroy();
    await knot.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
