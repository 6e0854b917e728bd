// The embedded database as the adapter opens it: WAL with synchronous=FULL (an acknowledged write survives a
// crash), a bounded page cache, foreign keys enforced, and per-account indexes that the list queries use.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase, SQLITE_CACHE_KIB } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';

let dir: string;
let db: Database;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-sqlite-'));
  db = openDatabase(`sqlite:${join(dir, 'nested', 'folder', 'db.sqlite')}`);
  await migrateToLatest(db);
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const pragma = async (name: string) =>
  Object.values((await sql<Record<string, unknown>>`pragma ${sql.raw(name)}`.execute(db)).rows[0] ?? {})[0];

describe('openDatabase with sqlite:', () => {
  it('creates the missing folders of the file and runs in WAL mode with synchronous=FULL', async () => {
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(2); // 2 = FULL
  });

  it("bounds each connection's page cache (better-sqlite3 builds SQLite with 16,000 KiB)", async () => {
    expect(SQLITE_CACHE_KIB).toBeLessThan(16_000);
    // A read outside a transaction is the reader's; a transaction runs on the writer.
    expect(await pragma('cache_size')).toBe(-SQLITE_CACHE_KIB);
    const inWriter = await db
      .transaction()
      .execute((trx) => sql<Record<string, unknown>>`pragma cache_size`.execute(trx));
    expect(Object.values(inWriter.rows[0] ?? {})[0]).toBe(-SQLITE_CACHE_KIB);
  });

  it('enforces foreign keys', async () => {
    expect(await pragma('foreign_keys')).toBe(1);
    await expect(
      db
        .insertInto('spaces')
        .values({ account_id: 999, name: 'x', name_key: 'x', color: 1, created_at: 'now', updated_at: 'now' })
        .execute(),
    ).rejects.toThrow(/FOREIGN KEY/);
  });

  it.each([
    ['domains', 'id', 'domains_account_id'],
    ['domains', 'name_key', 'domains_account_name'],
    ['spaces', 'id', 'spaces_account_id'],
    ['spaces', 'name_key', 'spaces_account_name'],
  ])('lists %s of one account sorted by %s through the index %s', async (table, column, index) => {
    const plan = await sql<{ detail: string }>`explain query plan
      select * from ${sql.table(table)} where account_id = 1 order by ${sql.ref(column)} desc, id desc limit 10`.execute(
      db,
    );
    const details = plan.rows.map((row) => row.detail).join('\n');
    expect(details).toContain(index);
    expect(details).not.toContain('TEMP B-TREE');
  });
});
