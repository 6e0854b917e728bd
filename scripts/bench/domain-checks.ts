// `npm run bench:domain-checks`: what the check schedule costs for DOMAINS domains (default 10,000), in DNS
// queries and CPU, against a real Knot server on 127.0.0.1. Stores the domains on a fresh SQLite file (half of
// them with their TXT record published, so that both outcomes are measured), makes them all due, and lets the
// scheduler's own code (claims, lookups, transitions) check each once. Prints the queries sent, the CPU time of
// this process per check, and what the default schedule makes of it per hour and per day.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { issueKey } from '../../server/accounts/keys.js';
import { openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { wakeupsOf } from '../../server/db/wakeups.js';
import { DEFAULT_SCHEDULE, type LookupResult } from '../../server/domains/check-rules.js';
import type { DomainChecks } from '../../server/domains/checks.js';
import { domainRepository } from '../../server/domains/repository.js';
import { domainCheckJob } from '../../server/domains/scheduler.js';
import { txtLookup } from '../../server/domains/txt-lookup.js';
import { eventLog } from '../../server/events/outbox.js';
import { startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { startKnot, ZONE } from '../../test/support/knot.js';

const DOMAINS = Number(process.env.DOMAINS ?? 10_000);
const QPS = Number(process.env.QPS ?? 2_000);

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-checks-'));
  const knot = await startKnot();
  const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
  try {
    await migrateToLatest(db);
    const { account } = await issueKey(db, 'bench');
    const repository = domainRepository(
      db,
      { pendingFirstMs: 0 },
      eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)),
    );
    const published: string[] = [];
    for (let i = 0; i < DOMAINS; i++) {
      const { record } = await repository.create(
        account.id,
        {
          name: `d${i}.${ZONE}`,
          index_page: null,
          not_found_page: null,
        },
        { requestId: null, idempotencyKey: null },
      );
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
      { wakeups: wakeupsOf(db), logger: createLogger('silent') },
    );
    const cpu = process.cpuUsage();
    const started = performance.now();
    // The scheduler's loop runs by itself; wait until every domain has been checked once.
    for (;;) {
      const row = await db
        .selectFrom('domains')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('last_checked_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (Number(row.n) === 0) break;
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
    const result = {
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
