// A record's metadata in its two places, written together in the record's transaction: the record's `metadata`
// column (JSON, what reads return) and one row per pair in `<records>_metadata` (what `?metadata[key]=value`
// finds through its index, migration 0011).
import { type Database, lockedForUpdate } from '../db/database.js';
import { inTransaction, type Updated } from '../db/owned.js';
import { type Metadata, mergeMetadata, parseMetadata, serializeMetadata } from './rules.js';

export const TABLES_WITH_METADATA = ['domains', 'spaces', 'webhook_endpoints'] as const;
export type TableWithMetadata = (typeof TABLES_WITH_METADATA)[number];

/** A merge would leave the record with more than MAX_KEYS keys: these sent keys do not fit. */
export class TooManyMetadataKeysError extends Error {
  constructor(readonly keys: string[]) {
    super(`metadata keys past the limit: ${keys.join(', ')}`);
  }
}

/** The metadata a store sets: the sent pairs with a value (an empty value sets nothing). */
export function newMetadata(sent: Metadata | undefined): Metadata {
  return Object.fromEntries(Object.entries(sent ?? {}).filter(([, value]) => value !== ''));
}

/**
 * The pair rows of a record its transaction has just stored: it has none yet (ids are never reused, SQLite's
 * AUTOINCREMENT and PostgreSQL's identity, and a deleted record's rows went with it, ON DELETE CASCADE), so nothing
 * is deleted first, and a record without metadata costs no statement.
 */
export async function insertPairs(
  trx: Database,
  table: TableWithMetadata,
  accountId: number,
  recordId: number,
  metadata: Metadata,
): Promise<void> {
  const rows = Object.entries(metadata).map(([key, value]) => ({
    record_id: recordId,
    account_id: accountId,
    key,
    value,
  }));
  if (rows.length > 0) await trx.insertInto(`${table}_metadata`).values(rows).execute();
}

/** The pair rows of a record as its metadata column holds them, after a write of that column. */
export async function syncPairs(
  trx: Database,
  table: TableWithMetadata,
  accountId: number,
  recordId: number,
  stored: string,
): Promise<void> {
  await trx.deleteFrom(`${table}_metadata`).where('record_id', '=', recordId).execute();
  await insertPairs(trx, table, accountId, recordId, parseMetadata(stored));
}

/**
 * The record's metadata with `changes` merged in, read in the transaction `trx` (the row locked on PostgreSQL, so
 * that two merges do not lose each other's keys); undefined when the account has no such record. Throws
 * TooManyMetadataKeysError when the result would hold more than MAX_KEYS keys.
 */
export async function mergedMetadataOf(
  trx: Database,
  table: TableWithMetadata,
  accountId: number,
  id: number,
  changes: Metadata,
): Promise<string | undefined> {
  const query = trx.selectFrom(table).select('metadata').where('account_id', '=', accountId).where('id', '=', id);
  const row = await lockedForUpdate(trx, query).executeTakeFirst();
  if (!row) return undefined;
  const merged = mergeMetadata(parseMetadata(row.metadata), changes);
  if ('tooMany' in merged) throw new TooManyMetadataKeysError(merged.tooMany);
  return serializeMetadata(merged.metadata);
}

/**
 * An update that merges `changes` into the record's metadata, in one transaction: the merge is read with the row
 * locked, `update` writes the merged column with the other changes (through the owned-records write, with its
 * version check and event), and the pairs follow when it changed the record. Undefined when there is no record.
 */
export async function updateWithMetadata<R>(
  db: Database,
  table: TableWithMetadata,
  accountId: number,
  id: number,
  changes: Metadata,
  update: (trx: Database, metadata: string) => Promise<Updated<R> | undefined>,
): Promise<Updated<R> | undefined> {
  return inTransaction(db, async (trx) => {
    const metadata = await mergedMetadataOf(trx, table, accountId, id, changes);
    if (metadata === undefined) return undefined;
    const updated = await update(trx, metadata);
    if (updated?.changed) await syncPairs(trx, table, accountId, id, metadata);
    return updated;
  });
}
