// The database's faults that are no request's doing: a connection lost, a limit reached, a lock held
// elsewhere, storage full or read-only. Each engine's error is translated here into one error of ours,
// DatabaseUnavailable, of one kind; the error handler answers it as a 503 with Retry-After (http/problems/errors.ts).

export type FaultKind =
  | 'database-unavailable'
  | 'database-timeout'
  | 'database-busy'
  | 'storage-full'
  | 'storage-read-only'
  | 'storage-error';

/** What each kind tells the client, and how long it should wait before trying again. */
export const FAULTS: Record<FaultKind, { detail: string; retryAfterSeconds: number }> = {
  'database-unavailable': {
    detail:
      'The database cannot be reached right now (it may be restarting or failing over). Retry shortly; a create ' +
      'sent with an Idempotency-Key is safe to retry.',
    retryAfterSeconds: 2,
  },
  'database-timeout': {
    detail: 'The database did not answer in time. Retry shortly.',
    retryAfterSeconds: 1,
  },
  'database-busy': {
    detail: 'The data is locked by another transaction or process. Retry shortly.',
    retryAfterSeconds: 1,
  },
  'storage-full': {
    detail: "The database's storage is full: changes cannot be saved until space is freed. Reads still work.",
    retryAfterSeconds: 10,
  },
  'storage-read-only': {
    detail: 'The database is read-only right now (as during a failover): changes cannot be saved. Reads still work.',
    retryAfterSeconds: 5,
  },
  'storage-error': {
    detail: "The database's storage reported an error: changes cannot be saved right now.",
    retryAfterSeconds: 10,
  },
};

/** The storage kinds: writes fail while reads may still work, so readiness must look at writes (db/health.ts). */
export const isStorageFault = (kind: FaultKind) => kind.startsWith('storage-');

export class DatabaseUnavailable extends Error {
  constructor(
    readonly kind: FaultKind,
    /** For the log: what happened, in the engine's words. */
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(reason, options);
  }

  get retryAfterSeconds(): number {
    return FAULTS[this.kind].retryAfterSeconds;
  }
}

export interface Fault {
  kind: FaultKind;
  /** The connection is gone or unusable: it must be destroyed, never reused. */
  connectionLost: boolean;
}

// PostgreSQL's SQLSTATE codes (Appendix A of its manual) by class or by code.
const POSTGRES_CODES: Record<string, Fault> = {
  '57P01': { kind: 'database-unavailable', connectionLost: true }, // admin_shutdown (pg_terminate_backend)
  '57P02': { kind: 'database-unavailable', connectionLost: true }, // crash_shutdown
  '57P03': { kind: 'database-unavailable', connectionLost: true }, // cannot_connect_now (starting, shutting down)
  '57P05': { kind: 'database-unavailable', connectionLost: true }, // idle_session_timeout
  '53300': { kind: 'database-unavailable', connectionLost: true }, // too_many_connections
  '3D000': { kind: 'database-unavailable', connectionLost: true }, // invalid_catalog_name (database dropped)
  '57014': { kind: 'database-timeout', connectionLost: false }, // query_canceled (statement_timeout)
  '55P03': { kind: 'database-busy', connectionLost: false }, // lock_not_available (lock_timeout)
  '40P01': { kind: 'database-busy', connectionLost: false }, // deadlock_detected
  '40001': { kind: 'database-busy', connectionLost: false }, // serialization_failure
  '53100': { kind: 'storage-full', connectionLost: false }, // disk_full
  '53200': { kind: 'database-unavailable', connectionLost: false }, // out_of_memory
  // A read-only transaction is a connection to a server that became (or always was) a replica after a failover:
  // a new connection may reach the new primary, so this one goes.
  '25006': { kind: 'storage-read-only', connectionLost: true }, // read_only_sql_transaction
  '58030': { kind: 'storage-error', connectionLost: false }, // io_error
  XX001: { kind: 'storage-error', connectionLost: false }, // data_corrupted
  XX002: { kind: 'storage-error', connectionLost: false }, // index_corrupted
};
const POSTGRES_CLASSES: Record<string, Fault> = {
  '08': { kind: 'database-unavailable', connectionLost: true }, // connection_exception
  '28': { kind: 'database-unavailable', connectionLost: true }, // invalid_authorization_specification
};

// Node's socket errors, and what pg and pg-pool say when the connection ends or cannot be had in time.
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const POOL_MESSAGES: [RegExp, Fault][] = [
  [/^timeout exceeded when trying to connect/, { kind: 'database-timeout', connectionLost: false }],
  [/^Query read timeout/, { kind: 'database-timeout', connectionLost: true }],
  [/^Connection terminated/, { kind: 'database-unavailable', connectionLost: true }],
  [/not queryable|^Client was closed/, { kind: 'database-unavailable', connectionLost: true }],
];

/** SQLite's result codes; extended codes (SQLITE_IOERR_WRITE, SQLITE_READONLY_DBMOVED) count as their primary code. */
const SQLITE_CODES: Record<string, Fault> = {
  SQLITE_BUSY: { kind: 'database-busy', connectionLost: false },
  SQLITE_FULL: { kind: 'storage-full', connectionLost: false },
  SQLITE_READONLY: { kind: 'storage-read-only', connectionLost: false },
  SQLITE_IOERR: { kind: 'storage-error', connectionLost: false },
  SQLITE_CORRUPT: { kind: 'storage-error', connectionLost: false },
  SQLITE_NOTADB: { kind: 'storage-error', connectionLost: false },
  SQLITE_CANTOPEN: { kind: 'storage-error', connectionLost: false },
  SQLITE_PROTOCOL: { kind: 'database-busy', connectionLost: false },
  SQLITE_NOMEM: { kind: 'database-unavailable', connectionLost: false },
};

/** The fault an error from either engine's driver stands for; undefined for anything else (a bug, a constraint). */
export function classify(error: unknown): Fault | undefined {
  if (error instanceof DatabaseUnavailable) return { kind: error.kind, connectionLost: false };
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code.startsWith('SQLITE_')) return SQLITE_CODES[/^SQLITE_[A-Z]+/.exec(code)?.[0] ?? ''];
    if (SOCKET_CODES.has(code)) return { kind: 'database-unavailable', connectionLost: true };
    if (/^[0-9A-Z]{5}$/.test(code)) return POSTGRES_CODES[code] ?? POSTGRES_CLASSES[code.slice(0, 2)];
  }
  if (typeof message === 'string') return POOL_MESSAGES.find(([pattern]) => pattern.test(message))?.[1];
  return undefined;
}

/** The error as ours when it is a fault, else unchanged. */
export function asDatabaseUnavailable(error: unknown): unknown {
  if (error instanceof DatabaseUnavailable) return error;
  const fault = classify(error);
  if (!fault) return error;
  const code = (error as { code?: unknown }).code;
  const reason = `${typeof code === 'string' ? `${code}: ` : ''}${(error as Error).message}`;
  return new DatabaseUnavailable(fault.kind, reason, { cause: error });
}
