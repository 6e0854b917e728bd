// Upgrades: a version started on a database that a newer version has migrated further runs on it as it is (an
// instance of the previous release restarted during a rolling upgrade, or a rollback), and says so; a database
// from another line of versions (a migration it does not know, one it knows missing) is refused.
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { createApp } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest, provider } from '../../server/db/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { sharedValidation } from '../support/server.js';

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

/** What a newer release's migration leaves behind: its row in kysely's table (and here, a table of its own). */
async function migrateAsNewerVersion(name: string) {
  await sql`create table future_feature (id integer primary key)`.execute(db);
  await db
    .insertInto('kysely_migration' as never)
    .values({ name, timestamp: new Date().toISOString() } as never)
    .execute();
}

describe('a database migrated by a newer version', () => {
  it('is left as it is, and the migrations this version does not know are named', async () => {
    await migrateAsNewerVersion('9999_future_feature');
    expect(await migrateToLatest(db)).toEqual({ newer: ['9999_future_feature'] });
    const known = Object.keys(await provider.getMigrations());
    const rows = await db
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect(rows.map((row) => (row as { name: string }).name).sort()).toEqual([...known, '9999_future_feature'].sort());
  });

  it('is served by this version', async () => {
    const server = (await createApp({ db, validation: sharedValidation() })).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { key } = await issueKey(db, 'after-upgrade');
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/spaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'name=Still%20served',
      });
      expect(response.status).toBe(201);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is refused when it also lacks a migration this version has (another line of versions)', async () => {
    const [last] = Object.keys(await provider.getMigrations()).slice(-1);
    await db
      .deleteFrom('kysely_migration' as never)
      .where('name' as never, '=', last as never)
      .execute();
    await expect(migrateToLatest(db)).rejects.toThrow(/does not know \(9999_future_feature\) and lacks some it does/);
  });
});
