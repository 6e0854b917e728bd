// Which errors of the engines are faults of the database (a 503 of a kind, server/db/faults.ts), and which
// connections they leave unusable; anything else (a constraint, a bug) stays what it is.
import { describe, expect, it } from 'vitest';
import { asDatabaseUnavailable, classify, DatabaseUnavailable, FAULTS } from '../../server/db/faults.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('classify', () => {
  it.each([
    // PostgreSQL: the connection is gone, or the server will not take one.
    ['57P01 admin shutdown (pg_terminate_backend)', coded('57P01'), 'database-unavailable', true],
    ['57P02 crash shutdown', coded('57P02'), 'database-unavailable', true],
    ['57P03 cannot connect now', coded('57P03'), 'database-unavailable', true],
    ['08006 connection failure', coded('08006'), 'database-unavailable', true],
    ['08P01 protocol violation', coded('08P01'), 'database-unavailable', true],
    ['53300 too many connections', coded('53300'), 'database-unavailable', true],
    ['28P01 password authentication failed', coded('28P01'), 'database-unavailable', true],
    ['ECONNRESET', coded('ECONNRESET'), 'database-unavailable', true],
    ['ECONNREFUSED', coded('ECONNREFUSED'), 'database-unavailable', true],
    [
      'pg: Connection terminated unexpectedly',
      new Error('Connection terminated unexpectedly'),
      'database-unavailable',
      true,
    ],
    [
      'pg: a client that saw its connection fail',
      new Error('Client has encountered a connection error and is not queryable'),
      'database-unavailable',
      true,
    ],
    // Limits.
    ['57014 statement timeout', coded('57014'), 'database-timeout', false],
    [
      'pg-pool: no connection came free in time',
      new Error('timeout exceeded when trying to connect'),
      'database-timeout',
      false,
    ],
    ['pg: a server that says nothing', new Error('Query read timeout'), 'database-timeout', true],
    ['55P03 lock timeout', coded('55P03'), 'database-busy', false],
    ['40P01 deadlock', coded('40P01'), 'database-busy', false],
    ['SQLITE_BUSY', coded('SQLITE_BUSY'), 'database-busy', false],
    ['SQLITE_BUSY_SNAPSHOT', coded('SQLITE_BUSY_SNAPSHOT'), 'database-busy', false],
    // Storage.
    ['53100 disk full', coded('53100'), 'storage-full', false],
    ['SQLITE_FULL', coded('SQLITE_FULL'), 'storage-full', false],
    ['25006 read-only transaction (a replica after a failover)', coded('25006'), 'storage-read-only', true],
    ['SQLITE_READONLY_DBMOVED', coded('SQLITE_READONLY_DBMOVED'), 'storage-read-only', false],
    ['58030 I/O error', coded('58030'), 'storage-error', false],
    ['SQLITE_IOERR_WRITE', coded('SQLITE_IOERR_WRITE'), 'storage-error', false],
    ['SQLITE_CORRUPT', coded('SQLITE_CORRUPT'), 'storage-error', false],
  ])('%s is %s', (_what, error, kind, connectionLost) => {
    expect(classify(error)).toEqual({ kind, connectionLost });
  });

  it.each([
    ['23505 unique violation', coded('23505')],
    ['SQLITE_CONSTRAINT_UNIQUE', coded('SQLITE_CONSTRAINT_UNIQUE')],
    ['42P01 undefined table (a bug)', coded('42P01')],
    ['a TypeError', new TypeError('x is undefined')],
    ['a string', 'nope'],
  ])('%s is no fault of the database', (_what, error) => {
    expect(classify(error)).toBeUndefined();
    expect(asDatabaseUnavailable(error)).toBe(error);
  });
});

describe('DatabaseUnavailable', () => {
  it('keeps the engine error as its cause and says when to retry', () => {
    const original = coded('57P01', 'terminating connection due to administrator command');
    const error = asDatabaseUnavailable(original) as DatabaseUnavailable;
    expect(error).toBeInstanceOf(DatabaseUnavailable);
    expect(error.kind).toBe('database-unavailable');
    expect(error.cause).toBe(original);
    expect(error.message).toContain('57P01');
    expect(error.retryAfterSeconds).toBe(FAULTS['database-unavailable'].retryAfterSeconds);
  });

  it.each(Object.entries(FAULTS))('%s tells the client to retry after a positive number of seconds', (_kind, fault) => {
    expect(fault.retryAfterSeconds).toBeGreaterThan(0);
    expect(fault.detail).toMatch(/\.$/);
  });
});
