// The keys command's refusals of its arguments, as a process: each bad option or name exits 2 with a sentence
// and issues nothing, an over-long argument is echoed cut, and a SQLite file that is not there is named and not
// made unless asked for. What it refuses is decided before any write, the same on every engine: SQLite only (and
// Node.js 24: what Node makes of an argument's bytes); keys-cli-policy.test.ts has what the command stores.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';
import { KEY_PATTERN, runToExit, stopAll } from './process.js';

const CLI = 'scripts/keys.mjs';
const SLOW = { timeout: 180_000 };

let server: TestServer;
const scratch = mkdtempSync(join(tmpdir(), 'dss-keys-cli-'));

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await stopAll();
  await server.close();
  rmSync(scratch, { recursive: true, force: true });
});

const keys = (...args: string[]) => runToExit(CLI, args, { DATABASE_URL: server.databaseUrl, LOG_LEVEL: 'silent' });

describe('create', SLOW, () => {
  it.each([
    { given: ['--scopes', 'spaces:delete'], says: 'Unknown scope "spaces:delete"' },
    { given: ['--expires-in', '90'], says: '--expires-in must be' },
    { given: ['--expires-at', '2001-01-01'], says: 'with its zone' },
    { given: ['--allow-ip', '10.0.0.0/33'], says: 'not an IPv4 or IPv6 address or range' },
    { given: ['--allow-ip', '::ffff:10.0.0.0/8'], says: 'it means ::/8' },
    { given: ['--allow-ip', '10.0.0.1/8'], says: 'write 10.0.0.0/8' },
    { given: ['--expires-at', '2027-02-30T00:00:00Z'], says: 'does not exist' },
    { given: ['--expires-at', '9999-12-31T00:00:00Z'], says: 'at most 10 years from now' },
    { given: ['--expires-at', '0000-01-01T00:00:00Z'], says: 'from 1970 on' },
    { given: ['--label', 'ci\u2028job'], says: '--label must not hold invisible' },
    { given: ['--label', 'x'.repeat(101)], says: '--label must be at most 100 characters' },
    {
      given: ['--expires-in', '-5d'],
      says: '--expires-in takes a duration ahead of now, as --expires-in 90d; "-5d" is negative',
    },
    { given: ['--expires-in=-5d'], says: '"-5d" is negative' },
    { given: ['--expires-in', '0s'], says: '--expires-in must be more than 0' },
    { given: ['--scopes', 'spaces:read,,'], says: 'empty entry between commas' },
    // What Node makes of an argument's bytes that are not UTF-8.
    { given: ['--label', 'ci\ufffdjob'], says: '--label must be valid UTF-8 text' },
  ])('refuses $given with a sentence, issuing nothing', async ({ given, says }) => {
    const exit = await keys('create', '--account', 'refused', ...given);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(says);
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });

  it.each([
    ['a zero-width space', 'acme\u200b'],
    ['a line separator', 'acme\u2028'],
    ['a bidi isolate', 'acme\u2067'],
    ['no-break space', 'ac\u00a0me'],
    ['101 characters', 'a'.repeat(101)],
  ])('refuses an account name with %s, issuing nothing', async (_, name) => {
    const exit = await keys('create', '--account', name);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain('--account must');
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });
});

describe('control characters', SLOW, () => {
  it.each([
    ['--account', 'evil\u001b[2Jcorp'],
    ['--label', 'line\nabcdefabcdef  forged  active'],
  ])('refuses them in %s, issuing nothing', async (option, value) => {
    const args = option === '--account' ? ['--account', value] : ['--account', 'plain', option, value];
    const exit = await keys('create', ...args);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(`${option} must not hold control characters`);
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });
});

describe('revoke', SLOW, () => {
  it('echoes an over-long argument cut, saying how long it was', async () => {
    const exit = await keys('revoke', 'x'.repeat(5000));
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`No key with id ${'x'.repeat(40)}… (5000 characters).`);
    expect(exit.stderr.length).toBeLessThan(300);
  });
});

describe('the database it works on', SLOW, () => {
  it('refuses a SQLite file that is not there, naming it, and does not create it', async () => {
    const file = join(scratch, 'typo.sqlite');
    const exit = await runToExit(CLI, ['list'], { DATABASE_URL: `sqlite:${file}` });
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(`There is no database at the SQLite file ${file}`);
    expect(exit.stderr).toContain('--create-database');
    expect(existsSync(file)).toBe(false);
  });

  it('creates it when told to, and names it', async () => {
    const file = join(scratch, 'new.sqlite');
    const exit = await runToExit(CLI, ['create', '--account', 'first', '--create-database'], {
      DATABASE_URL: `sqlite:${file}`,
    });
    expect(exit.code).toBe(0);
    expect(exit.stdout.match(KEY_PATTERN)).toHaveLength(1);
    expect(exit.stderr).toContain(`Database: the SQLite file ${file}.`);
    expect(existsSync(file)).toBe(true);
  });
});
