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
    /**
     * A page, newest first, below id `before` when given; of one `type`, or of `types` only when given (a key's
     * readable types). Several types are read as one limited probe per type, through the (account_id, type, id)
     * index, merged: a page costs at most types × limit index rows, however rare the types are in the log.
     */
    async list(
      accountId: number,
      { type, types, limit, before }: { type?: string; types?: readonly string[]; limit: number; before?: number },
    ): Promise<EventRow[]> {
      const page = (only?: string) => {
        let query = db
          .selectFrom('events')
          .select(['id', 'public_id', 'type', 'payload'])
          .where('account_id', '=', accountId)
          .orderBy('id', 'desc')
          .limit(limit);
        if (only !== undefined) query = query.where('type', '=', only);
        if (before !== undefined) query = query.where('id', '<', before);
        return query;
      };
      let rows: Array<{ id: number; public_id: string; type: string; payload: string }>;
      if (type !== undefined || types === undefined) rows = await page(type).execute();
      else if (types.length === 0) rows = [];
      else {
        const [first, ...rest] = types.map((each) => db.selectFrom(page(each).as(`t`)).selectAll());
        let union = first as NonNullable<typeof first>;
        for (const next of rest) union = union.unionAll(next);
        rows = await db.selectFrom(union.as('u')).selectAll().orderBy('id', 'desc').limit(limit).execute();
      }
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
