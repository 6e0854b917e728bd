// Backup and restore of the database DATABASE_URL names, for the backup command (cli/backup.ts): a database kept
// in one file is copied online (sqlite-backup.ts); one on a server has its own tools (pg_dump and pg_restore), so
// the command refuses it, saying so.
import { parseDatabaseUrl, redact } from './database.js';
import { BackupError, backupSqlite, restoreSqlite, type Snapshot } from './sqlite-backup.js';

export { BackupError, type Snapshot };

/** DATABASE_URL names no database file this command can copy: a usage error rather than a failed copy. */
export class BackupUnsupported extends BackupError {}

/** The file of the database `databaseUrl` names; BackupUnsupported for one that has none (in memory, a server's). */
function databaseFile(databaseUrl: string): string {
  const target = parseDatabaseUrl(databaseUrl);
  if ('error' in target) throw new BackupError(target.error);
  if (target.kind !== 'sqlite' || target.path === ':memory:') {
    throw new BackupUnsupported(`DATABASE_URL is ${redact(databaseUrl)}: this command copies a SQLite file.`);
  }
  return target.path;
}

/** Copies the database into the new file `file`, while the service reads and writes it; its file and what it holds. */
export async function backupDatabase(databaseUrl: string, file: string): Promise<{ path: string; snapshot: Snapshot }> {
  const path = databaseFile(databaseUrl);
  return { path, snapshot: await backupSqlite(path, file) };
}

/** Makes the database, where none exists yet, from the backup `file`; its file and what it holds. */
export async function restoreDatabase(
  databaseUrl: string,
  file: string,
): Promise<{ path: string; snapshot: Snapshot }> {
  const path = databaseFile(databaseUrl);
  return { path, snapshot: await restoreSqlite(file, path) };
}
