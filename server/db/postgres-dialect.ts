// kysely's PostgreSQL dialect on a pg pool that survives its connections dying (a failover, a restart, an
// idle-session reaper, pg_terminate_backend) and bounds every wait: each statement (statement_timeout), each lock
// wait (lock_timeout) and the wait for a connection (connectionTimeoutMillis), so that a fault is an error in
// time, never a hang. kysely takes the pool through its documented PostgresPool interface; ours hands out the
// pool's clients and gives a client that died back as broken, so that the pool destroys it.
import { createRequire } from 'node:module';
import type { Dialect, PostgresPool, PostgresPoolClient } from 'kysely';
import { PostgresDialect } from 'kysely';
import type PG from 'pg';
import type { Logger } from '../logger.js';
import { classify, DatabaseUnavailable } from './faults.js';
import type { StorageProbe } from './health.js';

export interface PostgresOptions {
  url: string;
  /** 0: none. */
  statementTimeoutMs: number;
  /** 0: none. */
  lockTimeoutMs: number;
  /** The longest wait for a connection of the pool, opening one included. */
  poolTimeoutMs: number;
  logger: Logger;
}

const POOL_SIZE = 10;
/** Past the statement timeout, how long to wait for a server that says nothing at all before giving up on it. */
const SILENT_SERVER_MARGIN_MS = 2_000;
/** PostgreSQL has no cheap probe write: a full or failing disk it reported stands for this long. */
const STORAGE_FAULT_HOLD_MS = 5_000;

// Loaded only for PostgreSQL: an embedded start does not pay for it.
const pg = () => createRequire(import.meta.url)('pg') as typeof PG;

export function postgresDialect(options: PostgresOptions): Dialect {
  return new PostgresDialect({ pool: guardedPool(createPool(options), options.logger) });
}

function createPool({ url, statementTimeoutMs, lockTimeoutMs, poolTimeoutMs }: PostgresOptions): PG.Pool {
  const { Pool, types } = pg();
  return new Pool({
    connectionString: url,
    max: POOL_SIZE,
    application_name: 'domain-space-service',
    // bigint (ids, counts) arrives as text by default; every value this schema holds is below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === types.builtins.INT8 ? Number : types.getTypeParser(oid, format as 'text')) as never,
    },
    // Sent at connection start; 0 leaves the server's own setting (none, by default).
    ...(statementTimeoutMs > 0
      ? { statement_timeout: statementTimeoutMs, query_timeout: statementTimeoutMs + SILENT_SERVER_MARGIN_MS }
      : {}),
    ...(lockTimeoutMs > 0 ? { lock_timeout: lockTimeoutMs } : {}),
    connectionTimeoutMillis: poolTimeoutMs,
    // A peer that vanished without a word (a failover behind a virtual IP) is noticed by the kernel.
    keepAlive: true,
  });
}

/**
 * The pool as kysely sees it. pg emits 'error' on a client whose connection fails, idle or checked out; with no
 * listener that ends the process, so every client gets one as it connects (and the pool one for its idle ones).
 * A client whose connection failed goes back to the pool with the error, which makes the pool destroy it
 * rather than hand it to the next request.
 */
function guardedPool(pool: PG.Pool, logger: Logger): PostgresPool {
  const lost = new WeakMap<PG.PoolClient, Error>();
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      lost.set(client, error);
      logger.warn('database connection lost', { code: (error as { code?: string }).code, error: error.message });
    });
  });
  // The pool's own report of an idle client's error, which the listener above has logged; the pool has removed it.
  pool.on('error', () => {});
  return {
    async connect() {
      const client = await pool.connect();
      const query = async (text: string, parameters: unknown[]) => {
        try {
          return await client.query(text, parameters);
        } catch (error) {
          if (classify(error)?.connectionLost) lost.set(client, error as Error);
          throw error;
        }
      };
      return { query, release: () => client.release(lost.get(client)) } as unknown as PostgresPoolClient;
    },
    end: () => pool.end(),
  };
}

/** A client of its own for LISTEN (wakeups.ts), outside the pool: a pooled connection cannot hold a LISTEN. */
export function listeningClient(url: string): PG.Client {
  return new (pg().Client)({ connectionString: url, application_name: 'domain-space-service jobs', keepAlive: true });
}

/**
 * Whether writes go through again after a storage fault. Read-only: a connection of its own (the pool's may
 * predate the change) asks the server whether its transactions are read-only. A full or failing disk: no write
 * that changes nothing would show it, so the fault stands until a write succeeds or a few seconds pass.
 */
export function postgresStorageProbe(url: string, timeoutMs: number): StorageProbe {
  return async (_db, fault) => {
    if (fault.kind !== 'storage-read-only') {
      if (Date.now() - fault.at < STORAGE_FAULT_HOLD_MS) throw new DatabaseUnavailable(fault.kind, 'writes failed');
      return;
    }
    const client = new (pg().Client)({
      connectionString: url,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs,
    });
    client.on('error', () => {});
    try {
      await client.connect();
      const { rows } = await client.query<{ read_only: string }>(
        "select current_setting('transaction_read_only') as read_only",
      );
      if (rows[0]?.read_only === 'on') throw new DatabaseUnavailable('storage-read-only', 'transactions are read-only');
    } finally {
      await client.end().catch(() => {});
    }
  };
}
