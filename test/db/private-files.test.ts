// The database and its backups are the owner's only, and never written through a planted link: backups in a
// folder others can write (mode 0777, no sticky bit) with links planted where the old temporary file went, a
// link as the backup's own name, and the modes of the database, its -wal and -shm files, its folder and backups.
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { BackupError, backupSqlite, restoreSqlite } from '../../server/db/sqlite-backup.js';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';

let dir: string;
let database: string;
let db: Database;
let shared: string;
let victim: string;

const mode = (path: string) => statSync(path).mode & 0o777;

/** A SQLite database that is not ours, with one table whose row must survive. */
function makeVictim(path: string): void {
  const other = new (sqliteDriver())(path);
  other.exec("create table precious (value text); insert into precious values ('kept')");
  other.close();
}

const victimIntact = () => {
  const other = new (sqliteDriver())(victim, { readonly: true, fileMustExist: true });
  try {
    return other.prepare('select value from precious').pluck().get();
  } finally {
    other.close();
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-private-'));
  database = join(dir, 'new', 'folder', 'db.sqlite');
  db = openDatabase(`sqlite:${database}`);
  await migrateToLatest(db);
  shared = join(dir, 'shared');
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  victim = join(dir, 'victim.sqlite');
  makeVictim(victim);
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe('the SQLite database', () => {
  it('is created 0600 in a folder created 0700, and so are its -wal and -shm files', async () => {
    await db.insertInto('accounts').values({ name: 'modes', created_at: new Date().toISOString() }).execute();
    expect(mode(join(dir, 'new'))).toBe(0o700);
    expect(mode(join(dir, 'new', 'folder'))).toBe(0o700);
    for (const file of [database, `${database}-wal`, `${database}-shm`])
      expect([file, mode(file)]).toEqual([file, 0o600]);
  });
});

describe('backups into a folder others can write', () => {
  it('never follows a link planted where a temporary file could go, and writes the backup 0600', async () => {
    const backup = join(shared, 'backup.sqlite');
    // Where the backup wrote its copy before: <file>.partial-<pid>.
    for (let pid = process.pid - 5; pid <= process.pid + 5; pid++) symlinkSync(victim, `${backup}.partial-${pid}`);
    const snapshot = await backupSqlite(database, backup);
    expect(snapshot.rows.accounts).toBeGreaterThanOrEqual(1);
    expect(victimIntact()).toBe('kept');
    expect(lstatSync(backup).isFile()).toBe(true);
    expect(mode(backup)).toBe(0o600);
    // Nothing of its own left behind: the planted links and the backup only.
    expect(readdirSync(shared).filter((name) => !name.includes('.partial-'))).toEqual(['backup.sqlite']);
  });

  it.each([
    ['a link to another database', () => victim],
    ['a dangling link', () => join(dir, 'nowhere.sqlite')],
  ])('refuses a backup name that is %s, and writes nothing through it', async (_, target) => {
    const backup = join(shared, `linked-${Math.random().toString(36).slice(2)}.sqlite`);
    symlinkSync(target(), backup);
    await expect(backupSqlite(database, backup)).rejects.toThrow(BackupError);
    expect(victimIntact()).toBe('kept');
    expect(lstatSync(backup).isSymbolicLink()).toBe(true);
    expect(readdirSync(shared).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('restores into a new folder 0700 as a file 0600', async () => {
    const backup = join(dir, 'for-restore.sqlite');
    await backupSqlite(database, backup);
    const target = join(dir, 'restored', 'db.sqlite');
    await restoreSqlite(backup, target);
    expect(mode(join(dir, 'restored'))).toBe(0o700);
    expect(mode(target)).toBe(0o600);
  });
});
