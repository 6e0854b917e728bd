// Wake-ups at commit (server/db/wakeups.ts) on the engine under test: a topic written in a transaction is heard once
// the transaction commits and not while it is open; on PostgreSQL through NOTIFY and a listening connection of its
// own, on SQLite through the driver's after-commit hook.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { notifyAtCommit, wakeupsOf } from '../../server/db/wakeups.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let db: Database;
const heard: string[] = [];
let unlisten: () => Promise<void>;

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
  await migrateToLatest(db);
  unlisten = wakeupsOf(db).listen((topic) => heard.push(topic));
  // The listening connection is ready once a wake-up outside any transaction comes through.
  for (const deadline = Date.now() + 10_000; !heard.includes('ready'); ) {
    if (Date.now() > deadline) throw new Error('the listener heard nothing in 10 s');
    await notifyAtCommit(db, 'ready');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
afterAll(async () => {
  await unlisten?.();
  await db?.destroy();
  await database?.drop();
});

describe('wake-ups', () => {
  it('are heard once the transaction commits, not while it is open', async () => {
    await db.transaction().execute(async (trx) => {
      await notifyAtCommit(trx, 'work');
      await trx.selectFrom('accounts').select('id').execute();
      expect(heard).not.toContain('work');
    });
    await expect.poll(() => heard.includes('work'), { timeout: 10_000 }).toBe(true);
  });

  it('are heard once per commit for a topic written many times in it', async () => {
    const before = heard.length;
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < 5; i++) await notifyAtCommit(trx, 'batch');
    });
    // A commit after it, heard after it (wake-ups come in commit order): a second 'batch' would be heard before.
    await notifyAtCommit(db, 'after-batch');
    await expect.poll(() => heard.slice(before).includes('after-batch'), { timeout: 10_000 }).toBe(true);
    expect(heard.slice(before).filter((topic) => topic === 'batch')).toHaveLength(1);
  });
});
