// The database adapter: turns a DATABASE_URL into a kysely instance, and holds everything that differs
// between the engines behind it (SQLite embedded, PostgreSQL for deployments that outgrow one machine).
// Nothing outside this file knows which engine it talks to.
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { type ColumnDefinitionBuilder, Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { DB } from './schema.js';

export type Database = Kysely<DB>;

export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** Parses a DATABASE_URL; returns an error message for one that cannot be opened. */
export function parseDatabaseUrl(url: string): DatabaseTarget | { error: string } {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    return path
      ? { kind: 'sqlite', path }
      : { error: 'DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:data/dss.sqlite' };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
      return { kind: 'postgres', url };
    } catch {
      return { error: 'DATABASE_URL is not a valid postgres:// URL' };
    }
  }
  return { error: `DATABASE_URL must be sqlite:<path> or postgres://user@host:5432/database (got "${redact(url)}")` };
}

/** The URL with any password hidden, for messages and logs. */
export function redact(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*:)[^@]*@/i, '$1***@');
}

export function openDatabase(url: string): Database {
  const target = parseDatabaseUrl(url);
  if ('error' in target) throw new Error(target.error);
  if (target.kind === 'postgres') {
    // bigint (ids, counts) arrives as text by default; every value this schema holds is below 2^53.
    const types = {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) as never,
    };
    const pool = new pg.Pool({ connectionString: target.url, max: 10, types });
    // An idle connection that drops is replaced on next use; /readyz reports whether the database answers.
    pool.on('error', () => {});
    return new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  }
  if (target.path !== ':memory:') mkdirSync(dirname(resolve(target.path)), { recursive: true });
  const sqlite = new SQLite(target.path);
  // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so an acknowledged write
  // survives a crash or power loss.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: sqlite }) });
}

// kysely does not export the type of addColumn's data type argument; this is it.
// biome-ignore lint/suspicious/noExplicitAny: any schema.
type DataTypeExpression = Parameters<ReturnType<Kysely<any>['schema']['createTable']>['addColumn']>[1];

/** Column types whose spelling differs between the engines, for the migrations. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema; kysely's Migrator takes Kysely<any>.
export function columnTypes(db: Kysely<any>) {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  return {
    /** Type of ids and of the columns that refer to them: 64-bit, as the API's ids go up to 2^53 - 1. */
    key: (postgres ? 'bigint' : 'integer') as DataTypeExpression,
    /** An auto-numbered primary key. */
    id: (column: ColumnDefinitionBuilder) =>
      postgres ? column.generatedByDefaultAsIdentity().primaryKey() : column.primaryKey().autoIncrement(),
    /** A point in time: timestamptz, or RFC 3339 text on SQLite. */
    timestamp: (postgres ? 'timestamptz' : 'text') as DataTypeExpression,
    /** Text that sorts by code point on every engine (SQLite's only order, PostgreSQL's "C" collation). */
    sortKey: (postgres ? sql`text collate "C"` : 'text') as DataTypeExpression,
  };
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
