// Online backup and restore of the SQLite database, by SQLite's backup API (better-sqlite3's backup()): the copy
// is made while the service keeps serving and writing, checked, and only then given its name. Both are written
// in a private folder (private-files.ts) and linked into place, never through a link planted where they go.
import { chmodSync, existsSync, linkSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { anythingAt, makeFolderFor, PRIVATE_FILE_MODE, privateWorkFolder } from './private-files.js';
import { DATA_TABLES } from './schema.js';
import { sqliteDriver } from './sqlite-driver.js';

export class BackupError extends Error {}

export interface Snapshot {
  bytes: number;
  /** Rows per table the API keeps. */
  rows: Record<string, number>;
}

const TABLES: readonly string[] = DATA_TABLES;
/**
 * Pages per step of the backup: all of them. A write by another connection between two steps restarts a backup,
 * which under steady writes might never end; one step reads one snapshot (in WAL mode writers go on meanwhile).
 */
const ALL_PAGES = 0x7fffffff;

/** Copies the database at `source` into the new file `destination`, while others read and write it. */
export async function backupSqlite(source: string, destination: string): Promise<Snapshot> {
  if (!existsSync(source)) throw new BackupError(`There is no database at ${source}.`);
  if (anythingAt(destination)) throw new BackupError(`${destination} exists already: name a new file.`);
  // A backup is one file: in rollback-journal mode, with no -wal or -shm file beside it when it is read.
  return copyChecked(source, destination, { fileMustExist: true }, 'delete');
}

/** Makes the database at `target`, where none exists yet, from the backup file `backup`. */
export async function restoreSqlite(backup: string, target: string): Promise<Snapshot> {
  if (!existsSync(backup)) throw new BackupError(`There is no backup at ${backup}.`);
  if ([target, `${target}-wal`].some(anythingAt)) {
    throw new BackupError(
      `A database exists at ${target} already. Stop the service, move ${target} (with its -wal and -shm ` +
        'files) away, then restore.',
    );
  }
  check(backup);
  makeFolderFor(target);
  // The service's database is in WAL mode.
  return copyChecked(backup, target, { readonly: true, fileMustExist: true }, 'wal');
}

async function copyChecked(
  from: string,
  to: string,
  options: { readonly?: boolean; fileMustExist: boolean },
  journalMode: 'delete' | 'wal',
) {
  const Driver = sqliteDriver();
  const work = privateWorkFolder(to);
  const partial = join(work, 'partial.sqlite');
  try {
    const source = new Driver(from, options);
    try {
      await source.backup(partial, { progress: () => ALL_PAGES });
    } finally {
      source.close();
    }
    const copy = new Driver(partial);
    copy.pragma(`journal_mode = ${journalMode}`);
    copy.close();
    const rows = check(partial);
    chmodSync(partial, PRIVATE_FILE_MODE);
    // link(2), not rename: it neither follows a link at `to` nor replaces whatever was put there meanwhile.
    try {
      linkSync(partial, to);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      throw new BackupError(`${to} was made by someone else meanwhile: name a new file.`);
    }
    return { bytes: statSync(to).size, rows };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** SQLite's integrity check and the rows per table; a BackupError when the file is not a sound database of ours. */
function check(file: string): Record<string, number> {
  const db = new (sqliteDriver())(file, { readonly: true, fileMustExist: true });
  try {
    const verdict = db.pragma('integrity_check', { simple: true });
    if (verdict !== 'ok') throw new BackupError(`${file} fails SQLite's integrity check: ${String(verdict)}`);
    const tables = new Set(
      (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map(
        (t) => t.name,
      ),
    );
    const missing = TABLES.filter((table) => !tables.has(table));
    if (missing.length > 0)
      throw new BackupError(`${file} is not a database of this service (no ${missing.join(', ')}).`);
    return Object.fromEntries(
      TABLES.map((table) => [table, (db.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n]),
    );
  } catch (error) {
    if (error instanceof BackupError) throw error;
    throw new BackupError(`${file} cannot be read as a SQLite database: ${(error as Error).message}`);
  } finally {
    db.close();
  }
}
