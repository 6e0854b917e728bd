// The database's time limits from the environment (server/config.ts): seconds, fractions allowed, each above 0,
// with defaults that bound every wait.
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig } from '../../server/config.js';
import { DEFAULT_DATABASE_LIMITS } from '../../server/db/database.js';

describe('DATABASE_*_TIMEOUT_S', () => {
  it('default to a 5 s statement timeout, a 2 s lock wait and a 2 s wait for a connection', () => {
    expect(readConfig({}).databaseLimits).toEqual({
      statementTimeoutMs: 5_000,
      lockTimeoutMs: 2_000,
      poolTimeoutMs: 2_000,
    });
    expect(readConfig({}).databaseLimits).toEqual(DEFAULT_DATABASE_LIMITS);
  });

  it('take seconds, fractions too', () => {
    const { databaseLimits } = readConfig({
      DATABASE_STATEMENT_TIMEOUT_S: '30',
      DATABASE_LOCK_TIMEOUT_S: '0.25',
      DATABASE_POOL_TIMEOUT_S: '1.5',
    });
    expect(databaseLimits).toEqual({ statementTimeoutMs: 30_000, lockTimeoutMs: 250, poolTimeoutMs: 1_500 });
  });

  it.each([
    ['DATABASE_STATEMENT_TIMEOUT_S', '0'],
    ['DATABASE_LOCK_TIMEOUT_S', 'soon'],
    ['DATABASE_POOL_TIMEOUT_S', '-1'],
    ['DATABASE_STATEMENT_TIMEOUT_S', '3601'],
  ])('refuse %s=%s, naming it', (name, value) => {
    expect(() => readConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => readConfig({ [name]: value })).toThrow(name);
  });
});
