// The metrics of the service's background work and its dependencies, beside the request metrics
// (http/pipeline/metrics.ts) and the webhook metrics (webhooks/metrics.ts): scheduled domain checks due and overdue,
// DNS lookups by outcome, rows pruned by retention, and whether the database serves. The gauges are read from the
// database when the metrics are collected; every process reads the same database, so with WORKERS > 1 their
// values are the same, not to be summed.
import type PromClient from 'prom-client';
import { type Database, healthOf } from './db/database.js';
import type { TxtLookup } from './domains/txt-lookup.js';
import { promClient } from './prom-client.js';

/** A scheduled check due for longer than this is overdue: the scheduler is falling behind (or not running). */
export const CHECK_OVERDUE_S = 600;
/** How long a scrape waits for the database's answer before it counts it as not serving. */
const READINESS_BUDGET_MS = 500;

export interface BackgroundObserver {
  /** Retention deleted `count` rows of `table`. */
  pruned(table: string, count: number): void;
  /** The DNS lookups of domain checks, counted by outcome. */
  countLookups(lookup: TxtLookup): TxtLookup;
}

export function backgroundMetrics(registry: PromClient.Registry, db: Database): BackgroundObserver {
  const { Counter, Gauge } = promClient();
  const registers = [registry];
  const pruned = new Counter({
    name: 'retention_rows_pruned_total',
    help: 'Rows deleted by retention, by table (the delivery log, events, Idempotency-Keys, verify windows).',
    labelNames: ['table'] as const,
    registers,
  });
  const lookups = new Counter({
    name: 'domain_check_lookups_total',
    help: 'DNS TXT lookups of domain checks, by outcome: answered (records, or none) or failed (timeout, SERVFAIL, refused).',
    labelNames: ['outcome'] as const,
    registers,
  });
  for (const outcome of ['answered', 'failed']) lookups.inc({ outcome }, 0);
  new Gauge({
    name: 'domain_checks',
    help: `Scheduled domain checks by state: due (their time has come) and overdue (due for over ${CHECK_OVERDUE_S} s).`,
    labelNames: ['state'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      const now = Date.now();
      const row = await db
        .selectFrom('domains')
        .where('next_check_at', '<=', new Date(now).toISOString())
        .select((eb) => [
          eb.fn.countAll().as('due'),
          eb.fn
            .count(
              eb
                .case()
                .when('next_check_at', '<=', new Date(now - CHECK_OVERDUE_S * 1000).toISOString())
                .then(1)
                .end(),
            )
            .as('overdue'),
        ])
        .executeTakeFirstOrThrow();
      this.set({ state: 'due' }, Number(row.due));
      this.set({ state: 'overdue' }, Number(row.overdue));
    },
  });
  const health = healthOf(db);
  new Gauge({
    name: 'database_ready',
    help: 'Whether the database serves (1) or not (0: no answer in time, or writes refused), as /readyz judges it.',
    aggregator: 'min',
    registers,
    async collect() {
      this.set((await health.readiness(READINESS_BUDGET_MS)).ready ? 1 : 0);
    },
  });
  return {
    pruned: (table, count) => pruned.inc({ table }, count),
    countLookups(lookup) {
      const counted = async (name: string) => {
        const result = await lookup(name);
        lookups.inc({ outcome: 'error' in result ? 'failed' : 'answered' });
        return result;
      };
      return Object.assign(counted, { close: () => lookup.close() });
    },
  };
}
