// Group commit in the SQLite driver (server/db/sqlite-dialect.ts): writes that wait for the writer while another
// runs share its transaction and one COMMIT, yet each settles only once its change is committed, and one that
// fails takes nothing of the others with it. Commits are counted from outside, in the WAL file's frames.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';

let dir: string;
let file: string;
let db: Database;
/** Another connection to the file, as another process would have: it sees committed changes only. */
let other: SQLite.Database;
let accountId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-group-commit-'));
  file = join(dir, 'db.sqlite');
  db = openDatabase(`sqlite:${file}`);
  await migrateToLatest(db);
  accountId = (await issueKey(db, 'group-commit')).account.id;
  other = new (sqliteDriver())(file);
});
afterAll(async () => {
  other.close();
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});
// Each test counts the COMMITs it makes from an empty WAL.
beforeEach(() => {
  expect(other.pragma('wal_checkpoint(TRUNCATE)', { simple: true })).toBe(0);
});

/** The COMMITs in the WAL file: frames of the current salt whose header gives the database's size after them. */
function walCommits(): number {
  const wal = readFileSync(`${file}-wal`);
  if (wal.length < 32) return 0;
  const pageSize = wal.readUInt32BE(8);
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (!wal.subarray(at + 8, at + 16).equals(wal.subarray(16, 24))) break;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

const space = (name: string, account = accountId) => ({
  account_id: account,
  name,
  name_key: name.toLowerCase(),
  color: 1,
  created_at: '2026-11-27T00:00:00.000Z',
  updated_at: '2026-11-27T00:00:00.000Z',
});
const committed = (name: string) => other.prepare('select 1 from spaces where name = ?').get(name) !== undefined;

describe('group commit on SQLite', () => {
  it('gives writes that wait for each other fewer COMMITs than writes, each settled only once committed', async () => {
    const names = Array.from({ length: 40 }, (_, i) => `grouped ${i}`);
    const seenWhenSettled = await Promise.all(
      names.map((name) =>
        db
          .insertInto('spaces')
          .values(space(name))
          .execute()
          .then(() => committed(name)),
      ),
    );
    expect(seenWhenSettled).toEqual(names.map(() => true));
    const commits = walCommits();
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(names.length);
  });

  it('lets a write alone commit at once', async () => {
    await db.insertInto('spaces').values(space('alone')).execute();
    expect(committed('alone')).toBe(true);
    expect(walCommits()).toBe(1);
  });

  it('rolls back a failing write and a failing transaction alone; the writes grouped with them commit', async () => {
    const results = await Promise.allSettled([
      db.insertInto('spaces').values(space('before the failures')).execute(),
      db.insertInto('spaces').values(space('no such account', 999_999)).execute(),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('spaces').values(space('half a transaction')).execute();
        throw new Error('the handler failed');
      }),
      db.transaction().execute(async (trx) => {
        await trx.insertInto('spaces').values(space('a whole transaction, 1')).execute();
        await trx.insertInto('spaces').values(space('a whole transaction, 2')).execute();
      }),
      db.insertInto('spaces').values(space('after the failures')).execute(),
    ]);
    expect(results.map((result) => result.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/FOREIGN KEY/);
    expect(String((results[2] as PromiseRejectedResult).reason)).toContain('the handler failed');
    for (const name of [
      'before the failures',
      'a whole transaction, 1',
      'a whole transaction, 2',
      'after the failures',
    ])
      expect(committed(name), name).toBe(true);
    expect(committed('half a transaction')).toBe(false);
    expect(walCommits()).toBeLessThan(3);
  });
});
