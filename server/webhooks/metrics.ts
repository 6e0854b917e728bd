// The webhook metrics, beside the request metrics (server/http/pipeline/metrics.ts): deliveries by outcome and their
// latency, counted by this process's worker, and the queue as the database holds it (its depth, its backlog by
// state, the age of the oldest undelivered event) and the endpoints by status, read when the metrics are collected.
import type PromClient from 'prom-client';
import type { Database } from '../db/database.js';
import { promClient } from '../prom-client.js';
import type { DeliveryObserver } from './deliveries.js';

/** `registry`: the one this process's request metrics live in (http/pipeline/metrics.ts). */
export function webhookMetrics(registry: PromClient.Registry, db: Database): DeliveryObserver {
  const { Counter, Gauge, Histogram } = promClient();
  const registers = [registry];
  const attempts = new Counter({
    name: 'webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retrying, gave_up, gone (410) or cancelled.',
    labelNames: ['outcome'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'webhook_delivery_duration_seconds',
    help: 'Time from sending a webhook delivery to its complete answer (or giving up on it).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers,
  });
  const pending = () =>
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => [eb.fn.countAll().as('depth'), eb.fn.min('created_at').as('oldest')])
      .where('state', '=', 'pending')
      .executeTakeFirstOrThrow();
  new Gauge({
    name: 'webhook_queue_depth',
    help: 'Webhook deliveries not yet delivered nor given up, over all endpoints.',
    // Every process reads the same database: the processes' values are the same, not to be summed.
    aggregator: 'max',
    registers,
    async collect() {
      this.set(Number((await pending()).depth));
    },
  });
  new Gauge({
    name: 'webhook_oldest_undelivered_age_seconds',
    help: 'Age of the oldest webhook delivery not yet delivered nor given up (0 when none).',
    aggregator: 'max',
    registers,
    async collect() {
      const { oldest } = await pending();
      this.set(oldest ? Math.max(0, (Date.now() - new Date(oldest as string).getTime()) / 1000) : 0);
    },
  });
  new Gauge({
    name: 'webhook_backlog',
    help: 'Webhook deliveries not yet delivered nor given up, by state: due (to be sent now), in_flight (claimed by a worker) or scheduled (a retry later).',
    labelNames: ['state'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      const now = new Date().toISOString();
      const row = await db
        .selectFrom('webhook_deliveries')
        .where('state', '=', 'pending')
        .select((eb) => [
          eb.fn.countAll().as('total'),
          eb.fn.count(eb.case().when('claimed_until', '>', now).then(1).end()).as('in_flight'),
          eb.fn
            .count(
              eb
                .case()
                .when(
                  eb.and([
                    eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]),
                    eb('next_attempt_at', '<=', now),
                  ]),
                )
                .then(1)
                .end(),
            )
            .as('due'),
        ])
        .executeTakeFirstOrThrow();
      const [total, inFlight, due] = [row.total, row.in_flight, row.due].map(Number) as [number, number, number];
      this.set({ state: 'due' }, due);
      this.set({ state: 'in_flight' }, inFlight);
      this.set({ state: 'scheduled' }, total - due - inFlight);
    },
  });
  new Gauge({
    name: 'webhook_endpoints',
    help: 'Webhook endpoints by status (enabled, disabled: by their account, or by the service after failing for too long).',
    labelNames: ['status'] as const,
    aggregator: 'max',
    registers,
    async collect() {
      const rows = await db
        .selectFrom('webhook_endpoints')
        .select((eb) => ['status', eb.fn.countAll().as('count')])
        .groupBy('status')
        .execute();
      for (const status of ['enabled', 'disabled'] as const) {
        this.set({ status }, Number(rows.find((row) => row.status === status)?.count ?? 0));
      }
    },
  });
  return {
    attempted(outcome, latencyMs) {
      attempts.inc({ outcome });
      if (outcome !== 'cancelled') latency.observe(latencyMs / 1000);
    },
  };
}
