// Reads of the event log: one account's events, newest first, and one event by its public id; and its retention.
import { sql } from 'kysely';
import type { Database, PruneBatch } from '../db/database.js';
import { precompiled } from '../db/precompiled.js';

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

/** What GET /events narrows the log to; every filter given must hold. */
export interface EventFilters {
  /** An event type (`space.updated`). */
  type?: string;
  /** A kind of record (`space`: every `space.*` type). */
  objectType?: string;
  /** From this time on (inclusive). */
  since?: Date;
  /** Before this time (exclusive). */
  until?: Date;
  /** Made by requests with this key (migration 0012's events.key_id). */
  keyId?: string;
  /** About this record (migration 0012's events.object_id). */
  objectId?: string;
}

type PageFilters = EventFilters & { before?: number };

/** One account's events that hold every filter, newest first, `limit` of them. */
function pageQuery(db: Database, accountId: number, limit: number, filters: PageFilters) {
  const { type, objectType, since, until, keyId, objectId, before } = filters;
  let query = db
    .selectFrom('events')
    .select(['id', 'public_id', 'type', 'payload'])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(limit);
  if (type !== undefined) query = query.where('type', '=', type);
  // A kind is letters and `_` (the spec's enum): `_` is LIKE's one-character wildcard, so it is escaped.
  if (objectType !== undefined) {
    query = query.where(sql<boolean>`type like ${`${objectType.replaceAll('_', '\\_')}.%`} escape '\\'`);
  }
  if (since !== undefined) query = query.where('created_at', '>=', since.toISOString());
  if (until !== undefined) query = query.where('created_at', '<', until.toISOString());
  if (keyId !== undefined) query = query.where('key_id', '=', keyId);
  if (objectId !== undefined) query = query.where('object_id', '=', objectId);
  if (before !== undefined) query = query.where('id', '<', before);
  return query;
}

export function eventRepository(db: Database) {
  // The log's pages without filters, as most reads of it are, compiled once (precompiled.ts).
  const firstPage = precompiled(db, (accountId: number, limit: number) => pageQuery(db, accountId, limit, {}));
  const pageBefore = precompiled(db, (accountId: number, limit: number, before: number) =>
    pageQuery(db, accountId, limit, { before }),
  );
  return {
    /**
     * A page, newest first, below id `before` when given, of the events that hold every filter; of one `type`, or
     * of `types` only when given (a key's readable types). Several types are read as one limited probe per type,
     * through the (account_id, type, id) index, merged: a page costs at most types × limit index rows, however
     * rare the types are in the log.
     */
    async list(
      accountId: number,
      { types, limit, ...filters }: EventFilters & { types?: readonly string[]; limit: number; before?: number },
    ): Promise<EventRow[]> {
      const { before, ...narrowing } = filters;
      const page = (type = filters.type) => pageQuery(db, accountId, limit, { ...filters, type });
      let rows: Array<{ id: number; public_id: string; type: string; payload: string }>;
      if (types === undefined && Object.values(narrowing).every((value) => value === undefined)) {
        rows = await (before === undefined ? firstPage(accountId, limit) : pageBefore(accountId, limit, before));
      } else if (filters.type !== undefined || types === undefined) rows = await page().execute();
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
