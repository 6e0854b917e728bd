// Retention as a job of the runner: every RETENTION_EVERY_MS each process deletes what is past its time (the
// delivery log and events past EVENT_RETENTION_DAYS, Idempotency-Keys past their 24 hours, ended verify windows),
// in bounded batches until a batch comes back short, so it keeps up with any write rate without one long
// transaction.
import type { Database, PruneBatch } from './db/database.js';
import { pruneVerifyWindows } from './domains/checks.js';
import { pruneEvents } from './events/repository.js';
import { KEY_RETENTION_MS, pruneIdempotencyKeys } from './idempotency/repository.js';
import type { Job } from './jobs/runner.js';
import type { Logger } from './logger.js';
import { inSpan } from './tracing.js';
import { pruneDeliveries } from './webhooks/repository.js';

/** Deletes up to `batchSize` rows made before `before`; how many it deleted. */
export type Pruner = (db: Database, batch: PruneBatch) => Promise<number>;

export interface Retained {
  name: string;
  /** How long its rows are kept, in milliseconds. */
  keepMs: number;
  prune: Pruner;
}

/** How often each process looks for rows past their time. */
export const RETENTION_EVERY_MS = 60_000;
/** Rows deleted per statement: small enough that no write waits long behind one. */
export const RETENTION_BATCH = 1_000;

/**
 * What the service keeps for a time: the delivery log (finished deliveries and their attempts, before the events,
 * so that an event's batch has little left to cascade), the event log, Idempotency-Keys, and the per-domain verify
 * windows once ended. Each repository owns its pruning function.
 */
export function retainedTables(eventRetentionMs: number, verifyWindowMs: number): Retained[] {
  return [
    { name: 'webhook_deliveries', keepMs: eventRetentionMs, prune: pruneDeliveries },
    { name: 'events', keepMs: eventRetentionMs, prune: pruneEvents },
    { name: 'idempotency_keys', keepMs: KEY_RETENTION_MS, prune: pruneIdempotencyKeys },
    { name: 'domain_verify_windows', keepMs: verifyWindowMs, prune: pruneVerifyWindows },
  ];
}

/** Prunes `table` batch by batch until a batch comes back short; how many rows. */
export async function pruneAll(db: Database, table: Retained, now = Date.now(), batchSize = RETENTION_BATCH) {
  const before = new Date(now - table.keepMs);
  let total = 0;
  for (;;) {
    const deleted = await inSpan(
      'retention batch',
      { attributes: { 'db.collection.name': table.name } },
      async (span) => {
        const count = await table.prune(db, { before, batchSize });
        span?.setAttribute('dss.retention.deleted', count);
        return count;
      },
    );
    total += deleted;
    if (deleted < batchSize) return total;
    // Between batches, the requests that came meanwhile go first.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function retentionJob(
  db: Database,
  tables: Retained[],
  {
    logger,
    everyMs = RETENTION_EVERY_MS,
    pruned,
  }: { logger: Logger; everyMs?: number; pruned?: (table: string, count: number) => void },
): Job<Retained[]> {
  let due = 0;
  return {
    name: 'retention',
    concurrency: 1,
    wakeOn: [],
    pollMs: everyMs,
    async claim() {
      if (Date.now() < due) return [];
      due = Date.now() + everyMs;
      return [tables];
    },
    async run(pass) {
      for (const table of pass) {
        // A span per table, its batches as children, so that its log line carries the trace's ids.
        await inSpan('retention', { attributes: { 'db.collection.name': table.name } }, async () => {
          const count = await pruneAll(db, table);
          if (count > 0) logger.info('pruned past retention', { table: table.name, count });
          pruned?.(table.name, count);
        });
      }
    },
  };
}
