// Reads of the event log: one account's events, newest first, and one event by its public id; and its retention.
import type { Database, PruneBatch } from '../db/database.js';

/**
 * Deletes up to `batchSize` events made before `before`, oldest first, in one statement (its own short
 * transaction, through the `events_created_at` index); how many. What still refers to them goes with them
 * (the database cascades to their deliveries and attempts): prune the delivery log first, so that a batch here
 * has little left to cascade. A batch shorter than `batchSize` means nothing more is due.
 */
export async function pruneEvents(db: Database, { before, batchSize }: PruneBatch): Promise<number> {
  const due = db
    .selectFrom('events')
    .select('id')
    .where('created_at', '<', before.toISOString())
    .orderBy('created_at')
    .limit(batchSize);
  const result = await db.deleteFrom('events').where('id', 'in', due).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface EventRow {
  id: number;
  publicId: string;
  type: string;
  /** The event as delivered (JSON). */
  payload: string;
}

export function eventRepository(db: Database) {
  return {
    /** A page, newest first; `kinds`: only events of those kinds of record (`domain` -> `domain.*`), when given. */
    async list(
      accountId: number,
      { type, kinds, limit, before }: { type?: string; kinds?: readonly string[]; limit: number; before?: number },
    ) {
      if (kinds?.length === 0) return [];
      let query = db
        .selectFrom('events')
        .select(['id', 'public_id', 'type', 'payload'])
        .where('account_id', '=', accountId)
        .orderBy('id', 'desc')
        .limit(limit);
      if (type !== undefined) query = query.where('type', '=', type);
      if (before !== undefined) query = query.where('id', '<', before);
      if (kinds !== undefined && type === undefined) {
        query = query.where((eb) => eb.or(kinds.map((kind) => eb('type', 'like', `${kind}.%`))));
      }
      const rows = await query.execute();
      return rows.map(
        (row): EventRow => ({ id: Number(row.id), publicId: row.public_id, type: row.type, payload: row.payload }),
      );
    },

    async find(accountId: number, publicId: string): Promise<EventRow | undefined> {
      const row = await db
        .selectFrom('events')
        .select(['id', 'public_id', 'type', 'payload'])
        .where('account_id', '=', accountId)
        .where('public_id', '=', publicId)
        .executeTakeFirst();
      return row && { id: Number(row.id), publicId: row.public_id, type: row.type, payload: row.payload };
    },
  };
}
