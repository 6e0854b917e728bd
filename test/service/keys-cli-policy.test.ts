// The keys command's key policies and hygiene, as a process against a running server's database, on each engine:
// create with scopes, an expiry and address ranges, rotate with an overlap, list showing all of it, account names
// that differ only by case, stored control characters printed escaped. Its refusals of bad arguments, which no
// engine changes, are keys-cli-arguments.test.ts.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { controlCharacterIn } from '../../server/cli/terminal-text.js';
import { publicIdOf, secretOf } from '../support/api-keys.js';
import { apiClient, startServer, type TestServer } from '../support/server.js';
import { KEY_PATTERN, runToExit, stopAll } from './process.js';

const CLI = 'scripts/keys.mjs';
const SLOW = { timeout: 180_000 };

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await stopAll();
  await server.close();
});

const keys = (...args: string[]) => runToExit(CLI, args, { DATABASE_URL: server.databaseUrl, LOG_LEVEL: 'silent' });

async function createKey(...args: string[]): Promise<{ key: string; publicId: string }> {
  const exit = await keys('create', ...args);
  const key = exit.stdout.match(KEY_PATTERN)?.[0];
  if (exit.code !== 0 || !key) throw new Error(`no key printed:\n${exit.stdout}\n${exit.stderr}`);
  return { key, publicId: publicIdOf(key) };
}

/** The row of `list` for a key, by its header's column names. */
async function listedRow(publicId: string): Promise<Record<string, string>> {
  const exit = await keys('list');
  expect(exit.code).toBe(0);
  const [header, ...lines] = exit.stdout.trimEnd().split('\n') as [string, ...string[]];
  const starts = [...header.matchAll(/\S+( \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  const line = lines.find((l) => l.startsWith(publicId)) ?? '';
  return Object.fromEntries(
    starts.map(({ name, at }, i) => [name, line.slice(at, starts[i + 1]?.at ?? line.length).trim()]),
  );
}

describe('create with a policy', SLOW, () => {
  it('issues a key with scopes, an expiry and address ranges, and list shows them', async () => {
    const before = Date.now();
    const { key, publicId } = await createKey(
      '--account',
      'dashboard',
      '--scopes',
      'spaces:read,domains:read',
      '--expires-in',
      '90d',
      '--allow-ip',
      '127.0.0.0/8',
      '--allow-ip',
      '::1',
    );
    const row = await listedRow(publicId);
    expect(row).toMatchObject({ STATUS: 'active', SCOPES: 'domains:read,spaces:read' });
    expect(row['ALLOWED IPS']).toBe('127.0.0.0/8,::1/128');
    const expires = Date.parse(row.EXPIRES as string);
    expect(expires - before).toBeGreaterThanOrEqual(90 * 86_400_000 - 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(90 * 86_400_000);
    const api = apiClient(server.apiUrl, key);
    expect((await api.GET('/spaces')).response.status).toBe(200);
    const refused = await api.POST('/spaces', { body: { name: 'Not mine to make' } });
    expect(refused.response.status).toBe(403);
    expect(refused.response.headers.get('x-accepted-scopes')).toBe('spaces:write');
    // The command's create is an event of the key's account, made by the command, without the secret.
    const [event] = await server.db
      .selectFrom('events')
      .select(['type', 'payload'])
      .where('object_id', '=', publicId)
      .execute();
    expect(event?.type).toBe('api_key.created');
    expect(JSON.parse(event?.payload ?? '{}').cause.actor).toEqual({
      type: 'cli',
      key_id: null,
      ip: null,
      user_agent: null,
    });
    expect(event?.payload).not.toContain(secretOf(key));
  });

  it('issues a key that expired already when told to, saying so, and it gets the expiry problem', async () => {
    const exit = await keys('create', '--account', 'born-expired', '--expires-at', '2001-01-01T00:00:00Z');
    expect(exit.code).toBe(0);
    expect(exit.stderr).toContain('is in the past: the key is expired from the start');
    const key = exit.stdout.match(KEY_PATTERN)?.[0] as string;
    const { response, error } = await apiClient(server.apiUrl, key).GET('/spaces');
    expect(response.status).toBe(401);
    expect((error as { type: string }).type).toBe('/problems/key-expired');
    expect((await listedRow(publicIdOf(key))).STATUS).toBe('expired');
  });
});

describe('account names that differ only by case', SLOW, () => {
  it('refuses a new account differing only by case from one that exists, and serves the one as written', async () => {
    await createKey('--account', 'CaseAcme');
    const exit = await keys('create', '--account', 'caseacme');
    expect(exit.code).toBe(2);
    expect(exit.stderr).toContain('"caseacme" would be new, and differs only by case from "CaseAcme"');
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
    expect((await createKey('--account', 'CaseAcme')).key).toMatch(KEY_PATTERN);
  });
});

describe('ranges, normalised', SLOW, () => {
  it('prints an IPv4-mapped range as the IPv4 range it is, and IPv6 compressed', async () => {
    const { publicId } = await createKey(
      '--account',
      'normalised',
      '--allow-ip',
      '::ffff:10.0.0.0/104',
      '--allow-ip',
      '2001:0DB8:0000:0000:0000:0000:0000:0000/32',
    );
    expect((await listedRow(publicId))['ALLOWED IPS']).toBe('10.0.0.0/8,2001:db8::/32');
  });
});

describe('revoke', SLOW, () => {
  it('given the whole key, never prints its secret back', async () => {
    const { key, publicId } = await createKey('--account', 'revoke-whole');
    const secret = secretOf(key);
    const exit = await keys('revoke', key);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toContain(`Key ${publicId} revoked`);
    const again = await keys('revoke', key);
    expect(again.code).toBe(1);
    const unknown = await keys('revoke', `dss_000000000000_${secret}`);
    expect(unknown.code).toBe(1);
    const rotated = await keys('rotate', key);
    for (const said of [exit, again, unknown, rotated]) expect(`${said.stdout}${said.stderr}`).not.toContain(secret);
  });
});

describe('rotate', SLOW, () => {
  it('issues a successor, keeps the old key for the overlap, and list shows it rotating and still in use', async () => {
    const old = await createKey('--account', 'rotation', '--scopes', 'spaces:read');
    const exit = await keys('rotate', old.publicId, '--overlap', '24h');
    expect(exit.code).toBe(0);
    const successor = exit.stdout.match(KEY_PATTERN)?.[0] as string;
    expect(successor).toBeDefined();
    expect(exit.stdout).toContain(`replaces ${old.publicId}`);
    // Both work; the old one is used after its successor was made.
    expect((await apiClient(server.apiUrl, old.key).GET('/spaces')).response.status).toBe(200);
    expect((await apiClient(server.apiUrl, successor).GET('/spaces')).response.status).toBe(200);
    const successorId = publicIdOf(successor);
    await expect
      .poll(async () => (await listedRow(old.publicId))['REPLACED BY'], { timeout: 20_000, interval: 200 })
      .toBe(`${successorId} (still in use)`);
    const row = await listedRow(old.publicId);
    expect(row.STATUS).toBe('rotating');
    expect((await listedRow(successorId)).SCOPES).toBe('spaces:read');
  });

  it('with --overlap 0s, the old key is refused within 1 s (the key cache) and the new one works', async () => {
    const old = await createKey('--account', 'rotation-now');
    expect((await apiClient(server.apiUrl, old.key).GET('/spaces')).response.status).toBe(200);
    const exit = await keys('rotate', old.publicId, '--overlap', '0s');
    expect(exit.code).toBe(0);
    const successor = exit.stdout.match(KEY_PATTERN)?.[0] as string;
    // As a revocation: the server may answer from its key cache for KEY_CACHE_TTL_MS, never 1 s.
    await sleep(1000);
    expect((await apiClient(server.apiUrl, old.key).GET('/spaces')).response.status).toBe(401);
    expect((await apiClient(server.apiUrl, successor).GET('/spaces')).response.status).toBe(200);
    expect((await listedRow(old.publicId)).STATUS).toBe('rotated');
  });

  it('refuses to rotate an unknown key', async () => {
    const exit = await keys('rotate', '000000000000');
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('No key with id 000000000000');
  });
});

describe('control characters', SLOW, () => {
  it('prints a stored value with control characters escaped: no terminal escape, no forged row', async () => {
    // Written past the command, as an older version (or another tool) may have stored it.
    const { publicId } = await issueKey(server.db, 'stored\u001b]0;pwned\u0007', 'x\nffffffffffff  forged');
    const exit = await keys('list');
    expect(controlCharacterIn(exit.stdout.replaceAll('\n', ''))).toBeUndefined();
    expect(exit.stdout).toContain('stored\\x1b]0;pwned\\x07');
    const lines = exit.stdout.split('\n');
    expect(lines.filter((l) => l.startsWith('ffffffffffff'))).toEqual([]);
    expect(lines.find((l) => l.startsWith(publicId))).toContain('x\\x0affffffffffff  forged');
  });
});

describe('the database it works on', SLOW, () => {
  it('names it on stderr', async () => {
    const exit = await keys('list');
    expect(exit.stderr).toMatch(/^Database: /m);
  });
});
