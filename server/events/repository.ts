// Reads of the event log: one account's events, newest first, and one event by its public id.
import type { Database } from '../db/database.js';

export interface EventRow {
  id: number;
  publicId: string;
  type: string;
  /** The event as delivered (JSON). */
  payload: string;
}

export function eventRepository(db: Database) {
  return {
    async list(accountId: number, { type, limit, before }: { type?: string; limit: number; before?: number }) {
      let query = db
        .selectFrom('events')
        .select(['id', 'public_id', 'type', 'payload'])
        .where('account_id', '=', accountId)
        .orderBy('id', 'desc')
        .limit(limit);
      if (type !== undefined) query = query.where('type', '=', type);
      if (before !== undefined) query = query.where('id', '<', before);
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

    /** Deletes the events made before `cutoff` (their deliveries and attempts go with them); how many. */
    async prune(cutoff: string, limit = 1000): Promise<number> {
      const ids = db.selectFrom('events').select('id').where('created_at', '<', cutoff).orderBy('id').limit(limit);
      const result = await db.deleteFrom('events').where('id', 'in', ids).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
