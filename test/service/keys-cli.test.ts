// The keys command (server/cli/keys.ts, as npm run keys runs it: bundled, scripts/keys.mjs) as a process: create
// shows a key once, list never shows secrets, revoke shuts a key out of a running server on the same database,
// and misuse exits non-zero with usage.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_CACHE_TTL_MS } from '../../server/accounts/keys.js';
import { publicIdOf, secretOf } from '../support/api-keys.js';
import { apiClient, startServer, type TestServer } from '../support/server.js';
import { KEY_PATTERN, runToExit, stopAll } from './process.js';

const CLI = 'scripts/keys.mjs';
// Each run loads the command (a fraction of a second, more on a busy machine).
const SLOW = { timeout: 180_000 };

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await stopAll();
  await server.close();
});

/** Runs the command against the test server's database. */
const keys = (...args: string[]) => runToExit(CLI, args, { DATABASE_URL: server.databaseUrl, LOG_LEVEL: 'silent' });

async function createKey(
  account: string,
  ...extra: string[]
): Promise<{ key: string; publicId: string; stdout: string }> {
  const exit = await keys('create', '--account', account, ...extra);
  expect(exit.code).toBe(0);
  const key = exit.stdout.match(KEY_PATTERN)?.[0];
  if (!key) throw new Error(`no key printed:\n${exit.stdout}\n${exit.stderr}`);
  return { key, publicId: publicIdOf(key), stdout: exit.stdout };
}

const listDomains = (key: string) => apiClient(server.apiUrl, key).GET('/domains');

describe('create', SLOW, () => {
  it('prints a new key exactly once, naming the account', async () => {
    const { key, publicId, stdout } = await createKey('acme', '--label', 'ci');
    expect(stdout.match(KEY_PATTERN)).toEqual([key]);
    expect(stdout).toContain('acme');
    expect(stdout).toContain(publicId);
    expect((await listDomains(key)).response.status).toBe(200);
  });

  it('issues a different key each time, for the same account', async () => {
    const first = await createKey('twice');
    const second = await createKey('twice');
    expect(second.key).not.toBe(first.key);
    const byFirst = await apiClient(server.apiUrl, first.key).POST('/spaces', { body: { name: 'Shared' } });
    expect(byFirst.response.status).toBe(201);
    const bySecond = await apiClient(server.apiUrl, second.key).GET('/spaces/{id}', {
      params: { path: { id: byFirst.data?.data.id as number } },
    });
    expect(bySecond.response.status).toBe(200);
  });

  it('exits non-zero with usage when --account is missing', async () => {
    const exit = await keys('create');
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain('--account');
    expect(exit.stderr).toContain('Usage');
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });

  it.each([
    { given: ['create', '--account'], names: '--account' },
    { given: ['create', '--account', 'acme', '--label'], names: '--label' },
  ])('exits 2 with a sentence and usage when $names has no value', async ({ given, names }) => {
    const exit = await keys(...given);
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain(`The option ${names} needs a value`);
    expect(exit.stderr).not.toContain('ERR_PARSE_ARGS');
    expect(exit.stderr).toContain('Usage');
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });
});

/** The lines of `list` as records, by its header's column names. */
async function listed(): Promise<Array<Record<string, string>>> {
  const exit = await keys('list');
  expect(exit.code).toBe(0);
  const [header, ...lines] = exit.stdout.trimEnd().split('\n') as [string, ...string[]];
  const starts = [...header.matchAll(/\S+( \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  return lines.map((line) =>
    Object.fromEntries(
      starts.map(({ name, at }, i) => [name, line.slice(at, starts[i + 1]?.at ?? line.length).trim()]),
    ),
  );
}

describe('list', SLOW, () => {
  it('has a STATUS column (active or revoked), and REVOKED holds the time of revocation or nothing', async () => {
    const kept = await createKey('status-kept');
    const gone = await createKey('status-gone');
    expect((await keys('revoke', gone.publicId)).code).toBe(0);
    const rows = await listed();
    const keptRow = rows.find((r) => r['KEY ID'] === kept.publicId);
    const goneRow = rows.find((r) => r['KEY ID'] === gone.publicId);
    expect(keptRow).toMatchObject({ STATUS: 'active', REVOKED: '' });
    expect(goneRow?.STATUS).toBe('revoked');
    expect(new Date(goneRow?.REVOKED as string).toISOString()).toBe(goneRow?.REVOKED);
  });

  it('shows LAST USED: never before the first request, the time of use after it', async () => {
    const { key, publicId } = await createKey('last-used');
    expect((await listed()).find((r) => r['KEY ID'] === publicId)?.['LAST USED']).toBe('never');
    const before = Date.now();
    expect((await listDomains(key)).response.status).toBe(200);
    // Written in the background, after the answer: allow it a moment.
    let lastUsed = 'never';
    for (let i = 0; i < 50 && lastUsed === 'never'; i++) {
      lastUsed = (await listed()).find((r) => r['KEY ID'] === publicId)?.['LAST USED'] ?? 'never';
    }
    expect(Date.parse(lastUsed)).toBeGreaterThanOrEqual(before - 1000);
    expect(Date.parse(lastUsed)).toBeLessThanOrEqual(Date.now());
  });

  it('shows the key id, account and label but never the secret', async () => {
    const { key, publicId } = await createKey('listed', '--label', 'laptop');
    const exit = await keys('list');
    expect(exit.code).toBe(0);
    const line = exit.stdout.split('\n').find((l) => l.includes(publicId));
    expect(line).toContain('listed');
    expect(line).toContain('laptop');
    expect(line).toContain('active');
    expect(exit.stdout).not.toContain(key);
    expect(exit.stdout).not.toContain(secretOf(key));
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });
});

describe('revoke', SLOW, () => {
  it('makes the key fail with 401 against a running server on the same database', async () => {
    const { key, publicId } = await createKey('revokee');
    expect((await listDomains(key)).response.status).toBe(200);

    const exit = await keys('revoke', publicId);
    expect(exit.code).toBe(0);

    // The running server may answer from its key cache for KEY_CACHE_TTL_MS (a revocation takes effect within it).
    await sleep(KEY_CACHE_TTL_MS);
    const { response } = await listDomains(key);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const line = (await keys('list')).stdout.split('\n').find((l) => l.includes(publicId));
    expect(line).not.toContain('active');
  });

  it("leaves the account's other keys working", async () => {
    const kept = await createKey('two-keys');
    const revoked = await createKey('two-keys');
    expect((await keys('revoke', revoked.publicId)).code).toBe(0);
    await sleep(KEY_CACHE_TTL_MS);
    expect((await listDomains(revoked.key)).response.status).toBe(401);
    expect((await listDomains(kept.key)).response.status).toBe(200);
  });

  it('exits non-zero when the key is already revoked', async () => {
    const { publicId } = await createKey('twice-revoked');
    expect((await keys('revoke', publicId)).code).toBe(0);
    const again = await keys('revoke', publicId);
    expect(again.code).toBe(1);
    const revokedAt = (await listed()).find((r) => r['KEY ID'] === publicId)?.REVOKED;
    expect(again.stderr).toContain(`Key ${publicId} was already revoked at ${revokedAt}.`);
  });

  it('exits non-zero for a key id that does not exist', async () => {
    const exit = await keys('revoke', '000000000000');
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain('000000000000');
  });

  it('exits non-zero with usage when the key id is missing', async () => {
    const exit = await keys('revoke');
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain('Usage');
  });
});

describe('misuse', SLOW, () => {
  it('exits 2 with usage on stderr when no command is given', async () => {
    const exit = await keys();
    expect(exit.code).toBe(2);
    expect(exit.stderr).toMatch(/Usage:[\s\S]*create[\s\S]*list[\s\S]*revoke/);
  });

  it('prints usage on stdout and exits 0 when asked for help', async () => {
    for (const ask of ['help', '--help', '-h']) {
      const exit = await keys(ask);
      expect(exit.code).toBe(0);
      expect(exit.stdout).toContain('Usage');
    }
  });

  it('exits non-zero with usage for an unknown command', async () => {
    const exit = await keys('destroy-everything');
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain('destroy-everything');
    expect(exit.stderr).toMatch(/Usage:[\s\S]*create[\s\S]*list[\s\S]*revoke/);
  });

  it('exits non-zero naming DATABASE_URL when it is invalid', async () => {
    const exit = await runToExit(CLI, ['list'], { DATABASE_URL: 'mysql://x' });
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain('DATABASE_URL');
  });
});
