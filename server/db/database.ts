// The database adapter: turns a DATABASE_URL into a kysely instance (SQLite embedded, PostgreSQL for deployments
// that outgrow one machine). Nothing outside server/db/ knows which engine it talks to (test/unit/import-structure
// .test.ts holds it): what must differ is a named function of db/. Here: connections, limits, column types, the
// row locks (lockedForUpdate and the rest below) and what a DATABASE_URL means to a person or a file beside it;
// in the two dialects; in the statements that must differ, each branching on `engineOf`: the search of
// listing.ts, the counters and trigram index of counts-and-search.ts, the claims of background work (claims.ts);
// and the backup of a database file (backup.ts).
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type SQLite from 'better-sqlite3';
import type { ColumnDefinitionBuilder } from 'kysely';
import { Kysely, PostgresIntrospector, sql } from 'kysely';
import { createLogger, type Logger } from '../logger.js';
import { guardedDialect } from './fault-guard.js';
import { DatabaseHealth } from './health.js';
import { listeningClient, postgresDialect, postgresStorageProbe } from './postgres-dialect.js';
import { createPrivateFile, makeFolderFor } from './private-files.js';
import type { DB } from './schema.js';
import { sqliteDialect, sqliteStorageProbe } from './sqlite-dialect.js';
import { attachWakeups, LocalWakeups, postgresWakeups, type Wakeups } from './wakeups.js';

export type Database = Kysely<DB>;

/** What one retention batch deletes (server/retention.ts): rows from before `before`, at most `batchSize` of them. */
export interface PruneBatch {
  before: Date;
  batchSize: number;
}

export type DatabaseTarget = { kind: 'sqlite'; path: string } | { kind: 'postgres'; url: string };

/** How long the database may take, so that a fault is an error in time (a 503), never a hang. */
export interface DatabaseLimits {
  /** PostgreSQL's statement_timeout: the longest a statement may run, lock waits included. */
  statementTimeoutMs: number;
  /** The longest wait for a lock: PostgreSQL's lock_timeout; on SQLite, a write's wait for the write lock. */
  lockTimeoutMs: number;
  /** PostgreSQL: the longest wait for a connection of the pool, opening one included. */
  poolTimeoutMs: number;
}

export const DEFAULT_DATABASE_LIMITS: DatabaseLimits = {
  statementTimeoutMs: 5_000,
  lockTimeoutMs: 2_000,
  poolTimeoutMs: 2_000,
};

/** For migrations at start: building an index on a big table may take minutes; a lock wait still ends. */
export const MIGRATION_LIMITS: DatabaseLimits = { statementTimeoutMs: 0, lockTimeoutMs: 60_000, poolTimeoutMs: 30_000 };

/** DATABASE_URL when the environment sets none. */
export const DEFAULT_DATABASE_URL = 'sqlite:data/domain-space.sqlite';

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

/** The database `target` names, in words for a person: "the SQLite file /abs/path", "the PostgreSQL database …". */
export function describeTarget(target: DatabaseTarget): string {
  return target.kind === 'sqlite'
    ? `the SQLite file ${resolve(target.path)}`
    : `the PostgreSQL database ${redact(target.url)}`;
}

/** Whether opening `target` would make a new database: one kept in a file that is not there. */
export function isAbsentFile(target: DatabaseTarget): boolean {
  return target.kind === 'sqlite' && target.path !== ':memory:' && !existsSync(target.path);
}

/**
 * A file of the service's called `name`, kept beside the database `url` names, and named after it so that a start
 * on one database never replaces another's: in a SQLite database's folder; for PostgreSQL, `data/<name>.pg-<server>-
 * <port>-<database>`; in data/ for an in-memory database or a URL that names none.
 */
export function fileBesideDatabase(url: string, name: string): string {
  const target = parseDatabaseUrl(url);
  if ('error' in target || (target.kind === 'sqlite' && target.path === ':memory:')) return join('data', name);
  if (target.kind === 'sqlite') return join(dirname(target.path), name);
  const { hostname, port, pathname, username } = new URL(target.url);
  const database = decodeURIComponent(pathname.slice(1)) || decodeURIComponent(username) || 'postgres';
  const server = `pg-${hostname || 'localhost'}-${port || '5432'}-${database}`.replace(/[^\w.-]+/g, '_');
  return join('data', `${name}.${server}`);
}

const healths = new WeakMap<Database, DatabaseHealth>();

/** Whether the database serves (for /readyz); every database openDatabase opened has one. */
export function healthOf(db: Database): DatabaseHealth {
  const health = healths.get(db);
  if (!health) throw new Error('healthOf: a database that openDatabase did not open');
  return health;
}

export function openDatabase(
  url: string,
  {
    limits = DEFAULT_DATABASE_LIMITS,
    logger = createLogger('silent'),
  }: { limits?: DatabaseLimits; logger?: Logger } = {},
): Database {
  const target = parseDatabaseUrl(url);
  if ('error' in target) throw new Error(target.error);
  let health: DatabaseHealth;
  let dialect: ReturnType<typeof sqliteDialect>;
  let wakeups: Wakeups;
  let pace: () => Promise<void>;
  if (target.kind === 'postgres') {
    health = new DatabaseHealth(postgresStorageProbe(target.url, limits.poolTimeoutMs));
    dialect = postgresDialect({ url: target.url, ...limits, logger });
    wakeups = postgresWakeups(() => listeningClient(target.url), logger);
    // A job claims again after this turn's I/O: what it finishes (attempts answered, say) is recorded in the next
    // claim's transaction, one round trip for all of them, rather than in one after it.
    pace = nextCheckPhase;
  } else {
    const local = new LocalWakeups();
    wakeups = local;
    // A job claims again in the check phase, where a group commits (sqlite-dialect.ts): the claim, with the
    // outcomes this turn's I/O finished, commits with the writes the turn made, not in a commit of its own.
    pace = nextCheckPhase;
    if (target.path !== ':memory:') {
      makeFolderFor(target.path);
      createPrivateFile(target.path);
    }
    health = new DatabaseHealth(sqliteStorageProbe(target.path));
    dialect = sqliteDialect({
      path: target.path,
      lockTimeoutMs: limits.lockTimeoutMs,
      configure: (connection, role) => {
        configureSqlite(connection, role);
        // notifyAtCommit's statement: held by the writer until its COMMIT; a read commits nothing.
        connection.function('pg_notify', (_channel: unknown, topic: unknown) => {
          if (role === 'writer') local.held(String(topic));
          return null;
        });
      },
      beforeClose: (writer) => optimizeSqlite(writer, 'close'),
      afterCommit: () => local.committed(),
    });
  }
  const db = new Kysely<DB>({ dialect: guardedDialect(dialect, health) });
  health.attach(db);
  healths.set(db, health);
  attachWakeups(db, wakeups);
  paces.set(db, pace);
  return db;
}

/**
 * Each SQLite connection's page cache, in KiB (2,000 pages of 4 KiB): half what better-sqlite3 builds SQLite with
 * (16,000 KiB), which the process's two connections filled once writes and long lists had touched enough of the
 * file: up to 32 MB outside V8's heap that stayed (scripts/deploy/OPERATIONS.md#memory). A page the cache does not
 * hold is read from the operating system's file cache.
 */
export const SQLITE_CACHE_KIB = 8_000;

/** The pragmas of each SQLite connection the service opens (a writer, and a reader beside it). */
function configureSqlite(connection: SQLite.Database, role: 'writer' | 'reader'): void {
  // WAL lets readers run beside the writer; FULL syncs the WAL on every commit, so an acknowledged write
  // survives a crash or power loss.
  if (role === 'writer') connection.pragma('journal_mode = WAL');
  connection.pragma('synchronous = FULL');
  connection.pragma('foreign_keys = ON');
  connection.pragma(`cache_size = -${SQLITE_CACHE_KIB}`);
  // Never wait inside SQLite, which would block the event loop: sqlite-dialect.ts retries on a timer instead.
  connection.pragma('busy_timeout = 0');
  // What SQLite advises for a long-lived connection (sqlite.org/lang_analyze.html#pragopt): at open, gather the
  // statistics that are missing or stale, reading at most 400 rows per index; again at close (sqlite-dialect.ts).
  // The list queries do not depend on them (listing.ts pins their plans); other queries may be helped.
  if (role === 'writer') optimizeSqlite(connection, 'open');
}

/**
 * `PRAGMA optimize`, at open (0x10002: tables never analysed too) or at close. Statistics only help the planner:
 * when they cannot be written (another connection holds the lock, a read-only or full disk), the service goes on.
 */
export function optimizeSqlite(connection: SQLite.Database, when: 'open' | 'close'): void {
  try {
    connection.pragma('analysis_limit = 400');
    connection.pragma(when === 'open' ? 'optimize = 0x10002' : 'optimize');
  } catch {
    // Nothing to do: the next open or close tries again.
  }
}

/**
 * What to tell an operator when the database cannot be used at start, in a sentence that says what to do;
 * undefined for an error that needs no explaining.
 */
export function describeStartupError(error: unknown, url: string): string | undefined {
  const target = parseDatabaseUrl(url);
  if ('error' in target) return undefined;
  if (target.kind === 'sqlite') return describeSqliteStartupError(error, target.path);
  const at = new URL(target.url);
  const database = decodeURIComponent(at.pathname.slice(1)) || decodeURIComponent(at.username) || 'postgres';
  const user = decodeURIComponent(at.username) || 'the current user';
  const server = `${at.hostname || 'localhost'}:${at.port || '5432'}`;
  const cause = driverCause(error);
  const code = (cause as { code?: unknown } | null)?.code;
  const message = cause instanceof Error ? cause.message : String(cause);
  if (code === '3D000') {
    return (
      `PostgreSQL database "${database}" does not exist on ${server}. Create it, then start again: ` +
      `createdb -h ${at.hostname || 'localhost'} -p ${at.port || '5432'}${at.username ? ` -U ${user}` : ''} ${database} ` +
      `(or, in psql as a user allowed to: CREATE DATABASE "${database}";). The service creates the tables itself.`
    );
  }
  if (typeof code === 'string' && code.startsWith('28')) {
    return `PostgreSQL on ${server} refused user "${user}" for database "${database}" (${message}): check the user and password in DATABASE_URL.`;
  }
  if (
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'ETIMEDOUT' ||
    /timeout/i.test(message)
  ) {
    return `PostgreSQL at ${server} cannot be reached (${message}): is it running, and does DATABASE_URL name the right host and port?`;
  }
  return undefined;
}

/** The driver's own error, under ours (faults.ts) when it is one of the database's faults. */
function driverCause(error: unknown): unknown {
  let cause = error;
  while (cause instanceof Error && cause.cause !== undefined && (cause as { code?: unknown }).code === undefined) {
    cause = cause.cause;
  }
  return cause;
}

/** SQLite cannot open or write its file at start: say which folder and why (SQLite writes -wal and -shm beside it). */
function describeSqliteStartupError(error: unknown, path: string): string | undefined {
  const cause = driverCause(error);
  const code = (cause as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !/^SQLITE_(CANTOPEN|READONLY|IOERR|FULL|PERM|AUTH)/.test(code)) return undefined;
  const folder = dirname(resolve(path));
  let access = '';
  try {
    accessSync(folder, constants.W_OK);
  } catch (reason) {
    const errno = (reason as { code?: string }).code;
    access =
      errno === 'EROFS'
        ? ` Its folder ${folder} is on a read-only file system.`
        : errno === 'EACCES'
          ? ` This user cannot write to its folder ${folder}.`
          : errno === 'ENOENT'
            ? ` Its folder ${folder} does not exist.`
            : '';
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return (
    `the SQLite database ${path} cannot be opened for writing (${code}: ${message}).${access} ` +
    `The service needs to write the file and its -wal and -shm files beside it: point DATABASE_URL at a writable ` +
    `folder with free space.`
  );
}

// kysely does not export the type of addColumn's data type argument; this is it.
// biome-ignore lint/suspicious/noExplicitAny: any schema.
type DataTypeExpression = Parameters<ReturnType<Kysely<any>['schema']['createTable']>['addColumn']>[1];

// biome-ignore lint/suspicious/noExplicitAny: any database of either engine.
const engines = new WeakMap<Kysely<any>, 'sqlite' | 'postgres'>();

/**
 * `query`'s rows locked against other writers until the transaction ends (FOR UPDATE) on PostgreSQL; SQLite's
 * write transaction (BEGIN IMMEDIATE) already excludes them, so there the query is as it is.
 */
// biome-ignore lint/suspicious/noExplicitAny: any database of the service's.
export function lockedForUpdate<Q extends { forUpdate(): Q }>(db: Kysely<any>, query: Q): Q {
  return engineOf(db) === 'postgres' ? query.forUpdate() : query;
}

/** As lockedForUpdate, but letting others take key-share locks (FOR NO KEY UPDATE): rows that refer to it may be added. */
// biome-ignore lint/suspicious/noExplicitAny: any database of the service's.
export function lockedForNoKeyUpdate<Q extends { forNoKeyUpdate(): Q }>(db: Kysely<any>, query: Q): Q {
  return engineOf(db) === 'postgres' ? query.forNoKeyUpdate() : query;
}

/** As lockedForUpdate, passing over rows another transaction holds (SKIP LOCKED): a claim of due work. */
// biome-ignore lint/suspicious/noExplicitAny: any database of the service's.
export function claimedForUpdate<Q extends { forUpdate(): Q; skipLocked(): Q }>(db: Kysely<any>, query: Q): Q {
  return engineOf(db) === 'postgres' ? query.forUpdate().skipLocked() : query;
}

/**
 * `query`'s rows kept from being deleted until the transaction ends (FOR KEY SHARE) on PostgreSQL, while other
 * writers may still update them; SQLite's write transaction already excludes every other writer.
 */
// biome-ignore lint/suspicious/noExplicitAny: any database of the service's.
export function keptFromDelete<Q extends { forKeyShare(): Q }>(db: Kysely<any>, query: Q): Q {
  return engineOf(db) === 'postgres' ? query.forKeyShare() : query;
}

/** Which engine a kysely instance talks to, for the few statements that must differ (migrations, search). */
// biome-ignore lint/suspicious/noExplicitAny: any schema.
export function engineOf(db: Kysely<any>): 'sqlite' | 'postgres' {
  let engine = engines.get(db);
  if (engine === undefined) {
    // The dialect's introspector is the engine's own class, reached through kysely's public `introspection`
    // (a transaction's too, which a lookup by instance would miss). Each read of it builds a new Kysely and
    // introspector: remembered per instance, since statements on the hot path ask.
    engine = db.introspection instanceof PostgresIntrospector ? 'postgres' : 'sqlite';
    engines.set(db, engine);
  }
  return engine;
}

/** Column types whose spelling differs between the engines, for the migrations. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema; kysely's Migrator takes Kysely<any>.
export function columnTypes(db: Kysely<any>) {
  const postgres = engineOf(db) === 'postgres';
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

/**
 * How soon a background job's loop claims again once a claim filled its room or units finished while it ran
 * (jobs/runner.ts): the engine's wiring in openDatabase says; the event loop's next check phase where it did not.
 */
export function claimPace(db: Database): () => Promise<void> {
  return paces.get(db) ?? nextCheckPhase;
}
const paces = new WeakMap<Database, () => Promise<void>>();
/** After this turn's I/O (setImmediate), not at once. */
const nextCheckPhase = () => new Promise<void>((resolve) => setImmediate(resolve));

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
