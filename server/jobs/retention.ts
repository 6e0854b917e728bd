// Retention as a job of the runner: every RETENTION_EVERY_MS each process deletes what is past its time (events past
// EVENT_RETENTION_DAYS, their deliveries and the delivery log with them; Idempotency-Keys past their 24 hours), in
// bounded batches until a batch comes back short, so it keeps up with any write rate without one long transaction.
import type { Database } from '../db/database.js';
import { eventRepository } from '../events/repository.js';
import { KEY_RETENTION_MS } from '../idempotency/repository.js';
import type { Logger } from '../logger.js';
import type { Job } from './runner.js';

/** Deletes up to `batchSize` rows made before `before`; how many it deleted. */
export type Pruner = (db: Database, options: { before: Date; batchSize: number }) => Promise<number>;

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

const pruneEvents: Pruner = (db, { before, batchSize }) => eventRepository(db).prune(before.toISOString(), batchSize);

const pruneDeliveryLog: Pruner = async (db, { before, batchSize }) => {
  // Attempts are written in time order: the oldest ids are the ones past their time.
  const ids = db
    .selectFrom('webhook_attempts')
    .select('id')
    .where('attempted_at', '<', before.toISOString())
    .orderBy('id')
    .limit(batchSize);
  const result = await db.deleteFrom('webhook_attempts').where('id', 'in', ids).executeTakeFirst();
  return Number(result.numDeletedRows);
};

const pruneIdempotencyKeys: Pruner = async (db, { before, batchSize }) => {
  // The batch's newest created_at, through the created_at index; none when fewer than a batch are past their time.
  const boundary = await db
    .selectFrom('idempotency_keys')
    .select('created_at')
    .where('created_at', '<', before.toISOString())
    .orderBy('created_at')
    .offset(batchSize - 1)
    .limit(1)
    .executeTakeFirst();
  let query = db.deleteFrom('idempotency_keys').where('created_at', '<', before.toISOString());
  if (boundary) query = query.where('created_at', '<=', boundary.created_at);
  const result = await query.executeTakeFirst();
  return Number(result.numDeletedRows);
};

/** What the service keeps for a time: the event log (and its deliveries), the delivery log, Idempotency-Keys. */
export function retainedTables(eventRetentionMs: number): Retained[] {
  return [
    { name: 'events', keepMs: eventRetentionMs, prune: pruneEvents },
    { name: 'webhook_attempts', keepMs: eventRetentionMs, prune: pruneDeliveryLog },
    { name: 'idempotency_keys', keepMs: KEY_RETENTION_MS, prune: pruneIdempotencyKeys },
  ];
}

/** Prunes `table` batch by batch until a batch comes back short; how many rows. */
export async function pruneAll(db: Database, table: Retained, now = Date.now(), batchSize = RETENTION_BATCH) {
  const before = new Date(now - table.keepMs);
  let total = 0;
  for (;;) {
    const deleted = await table.prune(db, { before, batchSize });
    total += deleted;
    if (deleted < batchSize) return total;
    // Between batches, the requests that came meanwhile go first.
    await new Promise((resolve) => setImmediate(resolve));
  }
}

export function retentionJob(
  db: Database,
  tables: Retained[],
  { logger, everyMs = RETENTION_EVERY_MS }: { logger: Logger; everyMs?: number },
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
        const pruned = await pruneAll(db, table);
        if (pruned > 0) logger.info('pruned past retention', { table: table.name, count: pruned });
      }
    },
  };
}
