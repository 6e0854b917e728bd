// Migration 0004_counts_and_search on a database that already holds records: the counts and the search index
// start from what is there, and the service built on them answers as before the migration.
import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { createApp } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { foldText } from '../../server/db/listing.js';
import { migrateToLatest, provider } from '../../server/db/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { sharedValidation } from '../support/server.js';

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

describe('0004_counts_and_search on existing records', () => {
  it('counts and indexes the records stored before it', async () => {
    const { error } = await new Migrator({ db, provider }).migrateTo('0001_initial');
    expect(error).toBeUndefined();
    const now = new Date().toISOString();
    const accounts = await db
      .insertInto('accounts')
      .values([
        { name: 'old-one', created_at: now },
        { name: 'old-two', created_at: now },
      ])
      .returning('id')
      .execute();
    const [one, two] = accounts.map((a) => Number(a.id)) as [number, number];
    const names = ['Ärger im Büro', 'büro 2', 'plain', 'x'];
    await db
      .insertInto('spaces')
      .values(
        names.map((name) => ({
          account_id: one,
          name,
          name_key: foldText(name),
          color: 1,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await db
      .insertInto('domains')
      // The row as migration 0001 knew it (the columns of later migrations did not exist yet).
      .values({
        account_id: two,
        name: 'shop.example',
        name_key: 'shop.example',
        created_at: now,
        updated_at: now,
      } as never)
      .execute();

    await migrateToLatest(db);
    const counts = await db.selectFrom('record_counts').selectAll().orderBy('account_id').orderBy('resource').execute();
    expect(counts.map((c) => [Number(c.account_id), c.resource, Number(c.total)])).toEqual([
      [one, 'spaces', 4],
      [two, 'domains', 1],
    ]);

    const app = await createApp({ db, validation: sharedValidation() });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as { port: number };
      const { key } = await issueKey(db, 'old-one');
      const list = async (query: string) => {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/spaces?${query}`, {
          headers: { Authorization: `Bearer ${key}` },
        });
        const body = await response.json();
        return { total: body.meta.total, names: body.data.map((s: { name: string }) => s.name) };
      };
      expect(await list('')).toMatchObject({ total: 4 });
      expect(await list('search=BÜRO')).toEqual({ total: 2, names: ['büro 2', 'Ärger im Büro'] });
      expect(await list('search=ärger%20im')).toEqual({ total: 1, names: ['Ärger im Büro'] });
      expect(await list('search=x')).toEqual({ total: 1, names: ['x'] });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
