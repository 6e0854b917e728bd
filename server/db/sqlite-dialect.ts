// kysely's SQLite dialect with a driver of ours, so that a lock held by another process never stops the event
// loop. better-sqlite3 is synchronous: with a busy timeout, a write waiting for the lock blocks the whole
// process, and kysely's own SqliteDriver runs every query, reads too, through one connection in turn. Here:
//   - busy_timeout is 0, so a statement never waits inside SQLite; a write that finds the lock taken is tried
//     again on a timer (backing off to a few milliseconds) until its budget, lockTimeoutMs, runs out, then it
//     fails with DatabaseUnavailable('database-busy');
//   - writes (and transactions, which take the lock up front with BEGIN IMMEDIATE) go through one writer
//     connection, one at a time, in the order they came; a queued write's budget counts from when it came;
//   - reads outside a transaction go through a second connection, which WAL lets read the last committed state
//     while another process (or this one) writes, so a read never queues behind a write waiting for the lock;
//   - group commit: each write (a transaction, or one statement) is a savepoint of a transaction that stays open
//     for the writes that wait for their turn or arrive before the event loop's next check phase (at most
//     MAX_GROUP), then commits once: one COMMIT, and with synchronous = FULL one fsync of the WAL, for the group
//     instead of one per write. A write's promise settles only when its group has committed, so nothing is
//     answered before it is durable; a write that fails rolls back to its savepoint alone, and a COMMIT that
//     fails (a full disk) fails every write of its group.
// Replaces kysely's SqliteDriver whole (its adapter, compiler and introspector are kysely's own), through
// kysely's documented Dialect and Driver interfaces.
import { statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type SQLite from 'better-sqlite3';
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult } from 'kysely';
import { SelectQueryNode, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, sql } from 'kysely';
import { currentSpanContext, linkedQuerySpan, querySpan, type SpanContext } from '../tracing.js';
import { DatabaseUnavailable } from './faults.js';
import type { StorageProbe } from './health.js';
import { sqliteDriver } from './sqlite-driver.js';

export interface SqliteOptions {
  /** The database file, or ':memory:' (one connection then: another connection would see another database). */
  path: string;
  /** How long a write may wait for the write lock, from when it is asked for. */
  lockTimeoutMs: number;
  /** Pragmas of each connection, run once it is open (database.ts). */
  configure(connection: SQLite.Database, role: 'writer' | 'reader'): void;
  /** Runs on the writer just before the connections close (e.g. `PRAGMA optimize`). */
  beforeClose?(writer: SQLite.Database): void;
  /** Runs after each COMMIT that succeeded (wakeups.ts: what the committed writes woke). */
  afterCommit?(): void;
}

const STATEMENT_CACHE_SIZE = 200;
/** Free space below this counts as full even when the probe's one page still fits (the next write may not). */
const MIN_FREE_BYTES = 1024 * 1024;
/** The longest pause between two tries of a write that found the lock taken. */
const MAX_RETRY_PAUSE_MS = 16;
/**
 * The most writes one COMMIT holds: bounds how long the first waits for the others (each a few hundred µs) and
 * the size of one transaction (an FTS5 index with contentless_delete slows as one transaction grows).
 */
const MAX_GROUP = 32;

export function sqliteDialect(options: SqliteOptions): Dialect {
  return {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new SqliteDriver(options),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/**
 * Whether writes go through again after a storage fault: a real write through the WAL that changes nothing
 * (the header's user_version, set to itself), and room for more than that one page.
 */
export function sqliteStorageProbe(path: string): StorageProbe {
  return async (db) => {
    if (path !== ':memory:') {
      const { bavail, bsize } = statfsSync(dirname(resolve(path)));
      if (bavail * bsize < MIN_FREE_BYTES) {
        throw new DatabaseUnavailable('storage-full', 'less than 1 MiB free beside the database');
      }
    }
    await db.transaction().execute(async (trx) => {
      const { rows } = await sql<{ user_version: number }>`pragma user_version`.execute(trx);
      await sql.raw(`pragma user_version = ${Number(rows[0]?.user_version ?? 0)}`).execute(trx);
    });
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown } | null)?.code));

/**
 * Runs `statement` now; while SQLite answers SQLITE_BUSY (another connection has the lock), again after a pause
 * that doubles up to MAX_RETRY_PAUSE_MS, until `deadline`.
 */
function whenUnlocked<T>(statement: () => T, deadline: number): Promise<T> {
  try {
    return Promise.resolve(statement());
  } catch (error) {
    return isBusy(error) ? retryWhenUnlocked(statement, deadline, error) : Promise.reject(error);
  }
}

async function retryWhenUnlocked<T>(statement: () => T, deadline: number, busy: unknown): Promise<T> {
  for (let pause = 1; ; pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MS)) {
    if (Date.now() + pause > deadline) {
      throw new DatabaseUnavailable('database-busy', 'the SQLite database is locked by another connection', {
        cause: busy,
      });
    }
    await sleep(pause);
    try {
      return statement();
    } catch (error) {
      if (!isBusy(error)) throw error;
      busy = error;
    }
  }
}

/** One better-sqlite3 connection, preparing each distinct SQL text once (bounded; the oldest goes first). */
class Connection {
  private readonly statements = new Map<string, SQLite.Statement>();

  constructor(readonly sqlite: SQLite.Database) {}

  run<R>({ sql, parameters }: { sql: string; parameters: readonly unknown[] }): QueryResult<R> {
    const statement = this.prepare(sql);
    if (statement.reader) return { rows: statement.all(parameters) as R[] };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  }

  prepare(sql: string): SQLite.Statement {
    let statement = this.statements.get(sql);
    if (statement === undefined) {
      statement = this.sqlite.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE_SIZE)
        this.statements.delete(this.statements.keys().next().value as string);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}

/** The writer's turn, one holder at a time, in order; a waiter whose deadline passes leaves the queue. */
class WriterQueue {
  private held = false;
  private readonly waiting: { grant: () => void; timer: NodeJS.Timeout }[] = [];

  acquire(deadline: number): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(
          () => {
            this.waiting.splice(this.waiting.indexOf(waiter), 1);
            reject(new DatabaseUnavailable('database-busy', 'too many writes waiting for the SQLite write lock'));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(waiter);
    });
  }

  get isHeld(): boolean {
    return this.held;
  }

  get someoneWaits(): boolean {
    return this.waiting.length > 0;
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.held = false;
  }
}

/** The writes that share one COMMIT: each waits for it once its own savepoint is released. */
class CommitGroup {
  members = 0;
  /** Whether its COMMIT waits for the event loop's next check phase. */
  scheduled = false;
  /** Set when SQLite rolled the whole transaction back (a full disk, an I/O error): why the group is lost. */
  lost?: unknown;
  /** While tracing: the span of each write in the group, which its COMMIT's span links to. */
  readonly spans: SpanContext[] = [];
  private readonly released: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  /** Resolves when the group commits, rejects when it cannot. */
  committed(): Promise<void> {
    return new Promise((resolve, reject) => this.released.push({ resolve, reject }));
  }

  settle(error?: unknown): void {
    for (const write of this.released) {
      if (error === undefined) write.resolve();
      else write.reject(error);
    }
  }
}

/** What kysely calls a connection: one caller's use of the driver, with its transaction if it began one. */
class Session implements DatabaseConnection {
  inTransaction = false;

  constructor(private readonly driver: SqliteDriver) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A span of its own inside a traced unit of work (tracing.ts): the SQL text, never its parameters.
    return querySpan('sqlite', query.sql, () => this.driver.execute<R>(query, this.inTransaction));
  }

  async *streamQuery<R>(query: CompiledQuery): AsyncIterableIterator<QueryResult<R>> {
    // Not used by this service; the whole result, as one chunk.
    yield await this.executeQuery<R>(query);
  }
}

class SqliteDriver implements Driver {
  private writer?: Connection;
  /** Reads outside transactions; undefined for ':memory:', where everything goes through the writer. */
  private reader?: Connection;
  private readonly queue = new WriterQueue();
  /** The open transaction of grouped writes, while one of them holds the writer's turn. */
  private group?: CommitGroup;

  constructor(private readonly options: SqliteOptions) {}

  async init(): Promise<void> {
    const Driver = sqliteDriver();
    const { path, configure } = this.options;
    const writer = new Driver(path);
    configure(writer, 'writer');
    this.writer = new Connection(writer);
    if (path !== ':memory:') {
      const reader = new Driver(path);
      configure(reader, 'reader');
      this.reader = new Connection(reader);
    }
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Session(this);
  }

  /** A query outside a transaction: a read on the reader, anything else as a write of its own. */
  async execute<R>(query: CompiledQuery, inTransaction: boolean): Promise<QueryResult<R>> {
    const writer = this.writer as Connection;
    // In a transaction the writer's turn is held already, and BEGIN IMMEDIATE took the lock: no statement inside
    // can find it taken.
    if (inTransaction) return this.inGroup(() => writer.run<R>(query));
    const reader = this.reader;
    if (reader && SelectQueryNode.is(query.query)) {
      return whenUnlocked(() => reader.run<R>(query), Date.now() + this.options.lockTimeoutMs);
    }
    const session = new Session(this);
    await this.beginTransaction(session);
    let result: QueryResult<R>;
    try {
      result = await this.inGroup(() => writer.run<R>(query));
    } catch (error) {
      await this.rollbackTransaction(session);
      throw error;
    }
    await this.commitTransaction(session);
    return result;
  }

  /** Runs a statement of the open group; when it fails and SQLite ended the whole transaction, the group is lost. */
  private inGroup<R>(statement: () => R): Promise<R> {
    try {
      return Promise.resolve(statement());
    } catch (error) {
      if (this.group && !this.writer?.sqlite.inTransaction) this.group.lost ??= error;
      return Promise.reject(error);
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const deadline = Date.now() + this.options.lockTimeoutMs;
    await this.queue.acquire(deadline);
    const writer = this.writer as Connection;
    try {
      if (this.group === undefined) {
        // IMMEDIATE: the write lock up front, so no statement inside can find it taken (a deferred transaction
        // that read first would fail at its first write when another process wrote meanwhile).
        await whenUnlocked(() => writer.prepare('begin immediate').run(), deadline);
        this.group = new CommitGroup();
      }
      writer.prepare('savepoint write').run();
      this.group.members++;
      const span = currentSpanContext();
      if (span) this.group.spans.push(span);
    } catch (error) {
      this.handOver();
      throw error;
    }
    (connection as Session).inTransaction = true;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const group = this.group as CommitGroup;
    // On failure kysely calls rollbackTransaction, which hands the turn over.
    this.writer?.prepare('release write').run();
    (connection as Session).inTransaction = false;
    const committed = group.committed();
    this.handOver();
    await committed;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    if (!session.inTransaction) return;
    session.inTransaction = false;
    try {
      const writer = this.writer as Connection;
      if (writer.sqlite.inTransaction) {
        writer.prepare('rollback to write').run();
        writer.prepare('release write').run();
      }
    } finally {
      this.handOver();
    }
  }

  /**
   * Passes the writer's turn on. The group stays open for the next write that waits, or, when none does yet, until
   * the event loop has read what the clients sent meanwhile (setImmediate: the writes those requests make join it);
   * it commits then, or at once when it is full or SQLite has ended it.
   */
  private handOver(): void {
    const group = this.group;
    if (group && (group.members >= MAX_GROUP || !this.writer?.sqlite.inTransaction)) this.commit(group);
    else if (group && !this.queue.someoneWaits && !group.scheduled) {
      group.scheduled = true;
      setImmediate(() => {
        // A write that holds the turn now hands it over again when it is done.
        if (this.group === group && !this.queue.isHeld) this.commit(group);
        else group.scheduled = false;
      });
    }
    this.queue.release();
  }

  /** Ends the group: COMMIT (or ROLLBACK, when SQLite ended it or the COMMIT fails), then settles its writes. */
  private commit(group: CommitGroup): void {
    this.group = undefined;
    const writer = this.writer as Connection;
    try {
      // SQLite ends the whole transaction itself on some faults (a full disk, an I/O error): its writes are lost.
      if (!writer.sqlite.inTransaction) {
        throw group.lost ?? new DatabaseUnavailable('storage-error', 'SQLite rolled back the transaction');
      }
      // One COMMIT for the group: traced once, linked from each write's span.
      linkedQuerySpan('sqlite', 'commit', group.spans, () => writer.prepare('commit').run());
      group.settle();
      this.options.afterCommit?.();
    } catch (error) {
      try {
        if (writer.sqlite.inTransaction) writer.prepare('rollback').run();
      } finally {
        group.settle(error);
      }
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // A transaction kysely left open (it never does) must not keep the writer's turn.
    await this.rollbackTransaction(connection);
  }

  async destroy(): Promise<void> {
    // A group whose COMMIT waits for the check phase commits now, before the connections close.
    if (this.group && !this.queue.isHeld) this.commit(this.group);
    if (this.writer?.sqlite.open) this.options.beforeClose?.(this.writer.sqlite);
    this.reader?.sqlite.close();
    this.writer?.sqlite.close();
  }
}
