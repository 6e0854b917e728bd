// A storage fault (a full disk, a read-only file system) stands for /readyz until something is stored again: a
// write that changed rows, or the engine's probe. A commit of a transaction that only read, or an update that
// matched nothing (a background job's claim of no work), needs no space and goes through on a full disk too: it
// must not declare the storage healthy (test/faults/disk-full.test.ts was flaky under load for that).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, healthOf, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
  await migrateToLatest(db);
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

describe('a noted storage fault', () => {
  it('stands after a transaction that only read, and after an update that matched nothing', async () => {
    healthOf(db).noteStorageFault('storage-full');
    await db.transaction().execute((trx) => trx.selectFrom('accounts').select('id').execute());
    await db.updateTable('accounts').set({ name: 'nobody' }).where('id', '=', -1).execute();
    await db
      .transaction()
      .execute((trx) => trx.updateTable('accounts').set({ name: 'nobody' }).where('id', '=', -1).execute());
    expect(healthOf(db).storageFault).toBe('storage-full');
  });

  it('is cleared by a write that stored rows, in a transaction or not', async () => {
    const now = new Date().toISOString();
    healthOf(db).noteStorageFault('storage-full');
    await db
      .transaction()
      .execute((trx) => trx.insertInto('accounts').values({ name: 'first', created_at: now }).execute());
    expect(healthOf(db).storageFault).toBeUndefined();
    healthOf(db).noteStorageFault('storage-full');
    await db.insertInto('accounts').values({ name: 'second', created_at: now }).execute();
    expect(healthOf(db).storageFault).toBeUndefined();
  });
});
