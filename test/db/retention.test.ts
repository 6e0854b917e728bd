// Retention (server/retention.ts) on the engine under test: what is past its time is deleted in bounded
// batches until a batch comes back short, and nothing younger is touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { pruneAll, retainedTables } from '../../server/retention.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

const DAY = 86_400_000;
let database: TestDatabase;
let db: Database;
let accountId: number;

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
  await migrateToLatest(db);
  accountId = (await issueKey(db, 'retention')).account.id;
});
afterAll(async () => {
  await db?.destroy();
  await database?.drop();
});

const count = async (table: 'events' | 'idempotency_keys') =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('retention', () => {
  it('prunes events past their time in batches until none is left, and keeps the younger ones', async () => {
    const old = new Date(Date.now() - 40 * DAY).toISOString();
    const young = new Date().toISOString();
    const rows = (at: string, from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        public_id: `evt_${String(from + i).padStart(24, '0')}`,
        account_id: accountId,
        type: 'space.created',
        created_at: at,
        payload: '{}',
      }));
    for (let i = 0; i < 5; i++)
      await db
        .insertInto('events')
        .values(rows(old, i * 50, 50))
        .execute();
    await db
      .insertInto('events')
      .values(rows(young, 1000, 7))
      .execute();
    const events = retainedTables(30 * DAY, 60_000).find((table) => table.name === 'events');
    if (!events) throw new Error('no events table');
    // Batches of 40: six full ones and a short one.
    expect(await pruneAll(db, events, Date.now(), 40)).toBe(250);
    expect(await count('events')).toBe(7);
  });

  it('prunes Idempotency-Keys past their 24 hours', async () => {
    const at = (ms: number) => new Date(Date.now() - ms).toISOString();
    const key = (name: string, created: string) => ({
      account_id: accountId,
      key: name,
      fingerprint: 'f',
      lock_token: null,
      locked_at: null,
      status: 201,
      headers: '{}',
      body: '{}',
      created_at: created,
    });
    await db
      .insertInto('idempotency_keys')
      .values([...Array.from({ length: 25 }, (_, i) => key(`old-${i}`, at(2 * DAY + i))), key('young', at(1000))])
      .execute();
    const keys = retainedTables(30 * DAY, 60_000).find((table) => table.name === 'idempotency_keys');
    if (!keys) throw new Error('no idempotency_keys table');
    expect(await pruneAll(db, keys, Date.now(), 10)).toBe(25);
    expect(await count('idempotency_keys')).toBe(1);
  });
});
