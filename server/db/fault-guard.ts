// Every query of either engine passes here (a kysely Dialect around the engine's own, through kysely's documented
// Dialect and Driver interfaces): a fault of the database becomes DatabaseUnavailable where it arises, the
// health of storage is noted for /readyz (db/health.ts), a read whose connection died is tried once more on a
// fresh one, and a transaction whose connection died does not hide its error behind a failed rollback.
import type { CompiledQuery, DatabaseConnection, Dialect, Driver, QueryResult, TransactionSettings } from 'kysely';
import { DeleteQueryNode, InsertQueryNode, SelectQueryNode, UpdateQueryNode } from 'kysely';
import { asDatabaseUnavailable, classify, DatabaseUnavailable, isStorageFault } from './faults.js';
import type { DatabaseHealth } from './health.js';

export function guardedDialect(dialect: Dialect, health: DatabaseHealth): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new GuardedDriver(dialect.createDriver(), health),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
  };
}

const isWrite = (query: CompiledQuery) =>
  InsertQueryNode.is(query.query) || UpdateQueryNode.is(query.query) || DeleteQueryNode.is(query.query);

/**
 * Whether the statement stored something: an insert, update or delete that changed rows. Only that shows the
 * storage takes writes again; one that matched nothing (a background job's claim of no work, a transaction that
 * only read) needs no space, and went through on a full disk too.
 */
const stored = (query: CompiledQuery, result: QueryResult<unknown>) =>
  isWrite(query) && (result.numAffectedRows ?? BigInt(result.rows.length)) > 0n;

class GuardedConnection implements DatabaseConnection {
  inTransaction = false;
  /** The transaction under way has stored something (noted as written once it commits). */
  stored = false;
  /** The connection died under a query: kysely's rollback on it can only fail, and must not hide why. */
  lost = false;

  constructor(
    readonly inner: DatabaseConnection,
    private readonly driver: GuardedDriver,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    try {
      const result = await this.inner.executeQuery<R>(query);
      if (stored(query, result)) {
        if (this.inTransaction) this.stored = true;
        else this.driver.health.noteWritten();
      }
      return result;
    } catch (error) {
      const fault = classify(error);
      if (!fault) throw error;
      if (fault.connectionLost) this.lost = true;
      // An idempotent read whose connection died (a failover, a restart) is worth one more try on a new one.
      if (fault.connectionLost && !this.inTransaction && SelectQueryNode.is(query.query)) {
        return this.driver.once((connection) => connection.executeQuery<R>(query));
      }
      throw this.driver.failed(error);
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

class GuardedDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    readonly health: DatabaseHealth,
  ) {}

  /** The error as DatabaseUnavailable when it is a fault, with a storage fault noted for readiness. */
  failed(error: unknown): unknown {
    const translated = asDatabaseUnavailable(error);
    if (translated instanceof DatabaseUnavailable && isStorageFault(translated.kind)) {
      this.health.noteStorageFault(translated.kind);
    }
    return translated;
  }

  /** Runs `work` on a connection of its own, outside any transaction. */
  async once<T>(work: (connection: DatabaseConnection) => Promise<T>): Promise<T> {
    let connection: DatabaseConnection;
    try {
      connection = await this.inner.acquireConnection();
    } catch (error) {
      throw this.failed(error);
    }
    try {
      return await work(connection);
    } catch (error) {
      throw this.failed(error);
    } finally {
      await this.inner.releaseConnection(connection);
    }
  }

  async init(): Promise<void> {
    await this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    try {
      return new GuardedConnection(await this.inner.acquireConnection(), this);
    } catch (error) {
      throw this.failed(error);
    }
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      await this.inner.beginTransaction(guarded.inner, settings);
    } catch (error) {
      if (classify(error)?.connectionLost) guarded.lost = true;
      throw this.failed(error);
    }
    guarded.inTransaction = true;
    guarded.stored = false;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    try {
      await this.inner.commitTransaction(guarded.inner);
    } catch (error) {
      if (classify(error)?.connectionLost) guarded.lost = true;
      throw this.failed(error);
    }
    guarded.inTransaction = false;
    if (guarded.stored) this.health.noteWritten();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const guarded = connection as GuardedConnection;
    guarded.inTransaction = false;
    try {
      await this.inner.rollbackTransaction(guarded.inner);
    } catch (error) {
      // On a lost connection the database rolled back by itself; the error that matters is the one before.
      if (guarded.lost || classify(error)?.connectionLost) return;
      throw this.failed(error);
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    await this.inner.releaseConnection((connection as GuardedConnection).inner);
  }

  async destroy(): Promise<void> {
    await this.inner.destroy();
  }
}
