// The database adapter: turns a DATABASE_URL into a kysely instance, and holds everything that differs
// between the engines behind it (SQLite embedded, PostgreSQL for deployments that outgrow one machine).
// Nothing outside this file knows which engine it talks to.
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import type SQLite from 'better-sqlite3';
import type { ColumnDefinitionBuilder } from 'kysely';
import type PG from 'pg';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql } from './kysely.js';
import type { DB } from './schema.js';
import { sqliteDriver } from './sqlite-driver.js';

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
    // Loaded only for PostgreSQL: an embedded start does not pay for it.
    const pg = createRequire(import.meta.url)('pg') as typeof PG;
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
  const Driver = sqliteDriver();
  const sqlite = new Driver(target.path);
  // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so an acknowledged write
  // survives a crash or power loss.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('busy_timeout = 5000');
  return new Kysely<DB>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
}

const STATEMENT_CACHE_SIZE = 200;

/**
 * better-sqlite3 as kysely's SQLite driver sees it, but preparing each distinct SQL text once: kysely asks for
 * a new statement on every query, and preparing costs more than running the small queries of this API.
 * Bounded: the oldest statement goes when a new one would pass the limit (the API's SQL texts are a few dozen).
 * Transactions begin IMMEDIATE: they take the write lock up front, waiting for it as long as busy_timeout.
 */
function withStatementCache(sqlite: SQLite.Database) {
  const statements = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(source: string): SQLite.Statement {
      let statement = statements.get(source);
      if (statement === undefined) {
        // kysely opens transactions with a deferred BEGIN; with several processes (WORKERS), one that read
        // first and then writes would fail at once with SQLITE_BUSY instead of waiting out busy_timeout.
        statement = sqlite.prepare(source === 'begin' ? 'begin immediate' : source);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
        statements.set(source, statement);
      }
      return statement;
    },
  };
}

// kysely does not export the type of addColumn's data type argument; this is it.
// biome-ignore lint/suspicious/noExplicitAny: any schema.
type DataTypeExpression = Parameters<ReturnType<Kysely<any>['schema']['createTable']>['addColumn']>[1];

/** Which engine a kysely instance talks to, for the few statements that must differ (migrations, search). */
// biome-ignore lint/suspicious/noExplicitAny: any schema.
export function engineOf(db: Kysely<any>): 'sqlite' | 'postgres' {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

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
  // What this service writes is already in that form: no need to parse and print it again.
  if (typeof value === 'string' && ISO_UTC.test(value)) return value;
  return (value instanceof Date ? value : new Date(value)).toISOString();
}
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
