// A migration on PostgreSQL while the service serves: a table it alters is in use (here a transaction holds a
// reader's lock on events, as a long read would), so its ALTER TABLE waits, and every statement on events after it
// queues behind that wait. The migration waits at most MIGRATION_LOCK_WAIT_MS, rolls back and tries again, so a
// serving instance's read gets through within its own lock_timeout; once the table is free, the migration applies.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, MIGRATION_LIMITS, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let serving: Database;
let migrating: Database;

beforeAll(async () => {
  database = await freshPostgresDatabase();
  migrating = openDatabase(database.url, { limits: MIGRATION_LIMITS });
  await migrateToLatest(migrating);
  // The last migration undone, as on a database the previous release migrated: it adds a column to events.
  await sql`alter table events drop column trace_parent`.execute(migrating);
  await sql`delete from kysely_migration where name = '0015_trace_context'`.execute(migrating);
  // The serving instances' limits: a statement waits at most 2 s for a lock, then answers 503.
  serving = openDatabase(database.url);
});
afterAll(async () => {
  await serving?.destroy();
  await migrating?.destroy();
  await database?.drop();
});

describe('a migration on PostgreSQL beside serving instances', () => {
  it("gives way to a table's users, and applies once the table is free", { timeout: 60_000 }, async () => {
    const holder = new pg.Client({ connectionString: database.url });
    holder.on('error', () => {});
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table events in access share mode');
      let gaveWay = 0;
      const applied: string[] = [];
      const migration = migrateToLatest(migrating, {
        applied: (name) => applied.push(name),
        gaveWay: () => gaveWay++,
      });
      // The migration is trying and giving way, over and over, while the table is held (two tries take well
      // under a second; a migration that waits for the lock instead never gives way).
      for (const deadline = Date.now() + 20_000; gaveWay < 2 && Date.now() < deadline; ) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(gaveWay).toBeGreaterThanOrEqual(2);
      expect(applied).toEqual([]);
      // A serving instance's read of events gets through: no migration is queued before it for long.
      const read = await sql<{ count: string }>`select count(*) as count from events`.execute(serving);
      expect(Number(read.rows[0]?.count)).toBe(0);
      await holder.query('commit');
      await migration;
      expect(applied).toEqual(['0015_trace_context']);
      const columns = await sql<{ column_name: string }>`
        select column_name from information_schema.columns where table_name = 'events' and column_name = 'trace_parent'`.execute(
        serving,
      );
      expect(columns.rows).toHaveLength(1);
    } finally {
      await holder.end();
    }
  });
});
