// Reads and writes of one account's record by id, shared by domains and spaces. A record of another account
// is treated exactly as a missing one: the account id is part of every statement.
import type { Selectable, Updateable } from 'kysely';
import type { Database } from './database.js';
import { type ListQuery, listPage } from './listing.js';
import type { DB } from './schema.js';

export type OwnedTable = 'domains' | 'spaces';

export async function findOwned<T extends OwnedTable>(db: Database, table: T, accountId: number, id: number) {
  return db
    .selectFrom(table as OwnedTable)
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst() as Promise<Selectable<DB[T]> | undefined>;
}

/** Applies `changes` and returns the new row; with no changes, returns the row untouched (updated_at too). */
export async function updateOwned<T extends OwnedTable>(
  db: Database,
  table: T,
  accountId: number,
  id: number,
  changes: Updateable<DB[T]>,
) {
  if (Object.keys(changes).length === 0) return findOwned(db, table, accountId, id);
  return db
    .updateTable(table as OwnedTable)
    .set({ ...(changes as Updateable<DB[OwnedTable]>), updated_at: new Date().toISOString() })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst() as Promise<Selectable<DB[T]> | undefined>;
}

export async function deleteOwned(db: Database, table: OwnedTable, accountId: number, id: number): Promise<boolean> {
  const result = await db.deleteFrom(table).where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** The reads and the delete every owned resource has, with rows mapped to the resource's records. */
export function ownedRecords<T extends OwnedTable, R>(db: Database, table: T, toRecord: (row: Selectable<DB[T]>) => R) {
  return {
    async list(accountId: number, query: ListQuery): Promise<{ records: R[]; total: number }> {
      const { rows, total } = await listPage(db, table, accountId, query);
      return { records: rows.map((row) => toRecord(row as Selectable<DB[T]>)), total };
    },

    async find(accountId: number, id: number): Promise<R | undefined> {
      const row = await findOwned(db, table, accountId, id);
      return row && toRecord(row);
    },

    async remove(accountId: number, id: number): Promise<boolean> {
      return deleteOwned(db, table, accountId, id);
    },
  };
}
