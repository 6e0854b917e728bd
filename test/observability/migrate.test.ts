// `npm run migrate` (scripts/migrate.mjs, from its bundle): applies the pending migrations to DATABASE_URL's
// database and exits, one log line per migration applied; run again, it has nothing to do; on a database it
// cannot open it fails with the reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript } from '../service/process.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database?.drop());

const migrate = async (databaseUrl: string) => {
  const exit = await runScript('scripts/migrate.mjs', [], { DATABASE_URL: databaseUrl }).exited;
  const lines = exit.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { code: exit.code, lines };
};

describe('npm run migrate', () => {
  it('applies the pending migrations, each logged with its duration, then has nothing to do', async () => {
    const url = database.url;
    const first = await migrate(url);
    expect(first.code).toBe(0);
    const applied = first.lines.filter((line) => line.msg === 'migration applied');
    expect(applied[0]).toMatchObject({ migration: '0001_initial', duration_ms: expect.any(Number) });
    expect(applied.map((line) => line.migration)).toContain('0015_trace_context');
    expect(first.lines.at(-1)).toMatchObject({ msg: 'migrated', applied: applied.length });

    const again = await migrate(url);
    expect(again.code).toBe(0);
    expect(again.lines.map((line) => line.msg)).toEqual(['nothing to migrate']);
  }, 60_000);

  it('fails with the reason on a database it cannot reach', async () => {
    const failed = await migrate('postgres://postgres@127.0.0.1:9/nowhere');
    expect(failed.code).toBe(1);
    expect(failed.lines.at(-1)).toMatchObject({ level: 'error', msg: 'migration failed', error: expect.any(String) });
  }, 60_000);
});
