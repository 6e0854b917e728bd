// The database adapter: turns a DATABASE_URL into a kysely instance, and holds everything that depends on
// which engine is behind it. Nothing outside this file knows it is SQLite.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

/** Parses a DATABASE_URL; returns an error message for one this build cannot open. */
export function parseDatabaseUrl(url: string): { kind: 'sqlite'; path: string } | { error: string } {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    return path
      ? { kind: 'sqlite', path }
      : { error: 'DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:data/dss.sqlite' };
  }
  if (/^postgres(ql)?:/.test(url)) {
    return { error: 'DATABASE_URL: PostgreSQL is not supported by this version yet; use sqlite:<path>' };
  }
  return { error: `DATABASE_URL must look like sqlite:<path> (got "${url}")` };
}

export function openDatabase(url: string): Database {
  const parsed = parseDatabaseUrl(url);
  if ('error' in parsed) throw new Error(parsed.error);
  if (parsed.path !== ':memory:') mkdirSync(dirname(resolve(parsed.path)), { recursive: true });
  const sqlite = new SQLite(parsed.path);
  // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so an acknowledged write
  // survives a crash or power loss.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
}

/** True when the error is a unique-constraint violation (SQLite or PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}

/** Timestamps come back as strings from SQLite and as Date from pg; the API always speaks RFC 3339 UTC. */
export function toIso(value: string | Date): string {
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
