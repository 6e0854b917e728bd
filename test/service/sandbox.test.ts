// `npm run sandbox` (server/main.ts --sandbox) as a process: an in-memory database, any well-formed key an
// isolated account seeded on first use, the service's true behaviour, nothing kept across a restart, and the
// conformance runner passing against it with every stateful check on. A start costs seconds of CPU (the spec
// compiled, the warm-up): the tests that need no fresh process share one, each with accounts of its own (a key is
// an account), and the restart test stops that one.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../server/accounts/key-policy.js';
import { apiClient } from '../support/server.js';
import { type Running, runScript, runToExit, SERVICE, stopAll } from './process.js';

// Each start loads the service (about a second, more on a busy machine).
const SLOW = { timeout: 120_000 };

const dir = mkdtempSync(join(tmpdir(), 'dss-sandbox-'));
// Set to show it is ignored: the sandbox never touches a database of the service's.
const DATABASE_URL = `sqlite:${join(dir, 'must-not-exist.sqlite')}`;

afterAll(async () => {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

async function sandbox(env: Record<string, string> = {}): Promise<{ server: Running; url: string; banner: string }> {
  const server = runScript(SERVICE, ['--sandbox'], {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    DATABASE_URL,
    ...env,
  });
  const [banner] = await server.waitForOutput(/listening on [\s\S]*curl [^\n]*\n/, 90_000);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
  if (!url) throw new Error(`no URL in:\n${banner}`);
  return { server, url: `${url}/api/v1`, banner };
}

let started: ReturnType<typeof sandbox> | undefined;
/** The sandbox the tests below share, started by the first that asks. */
const shared = () => {
  started ??= sandbox();
  return started;
};

describe('sandbox', SLOW, () => {
  it('says it is a sandbox, with a curl line that works as printed', async () => {
    const { banner, url } = await shared();
    expect(banner).toContain('SANDBOX');
    expect(banner).toContain('lost when the process stops');
    expect(banner).toContain('sqlite::memory:');
    const key = /Bearer (dss_\w+)'/.exec(banner)?.[1] as string;
    expect((await apiClient(url, key).GET('/domains')).response.status).toBe(200);
    expect(existsSync(join(dir, 'must-not-exist.sqlite'))).toBe(false);
  });

  it('makes each well-formed key an isolated account seeded with 2 domains and 3 spaces', async () => {
    const { url } = await shared();
    const alice = apiClient(url, 'dss_sandbox_alice');
    const bob = apiClient(url, 'dss_3f1c0a9b2d4e_Q2xhcmlmeS10aGlzLWlzLWFuLWV4YW1wbGUta2V5LW9u');

    const aliceDomains = (await alice.GET('/domains')).data?.data ?? [];
    const aliceSpaces =
      (await alice.GET('/spaces', { params: { query: { sort_by: 'name', sort: 'asc' } } })).data?.data ?? [];
    expect(aliceDomains).toHaveLength(2);
    expect(aliceSpaces.map((s) => s.name)).toEqual(['Engineering', 'Marketing', 'Sales']);
    const bobDomains = (await bob.GET('/domains')).data?.data ?? [];
    expect(bobDomains).toHaveLength(2);
    expect(bobDomains.map((d) => d.name)).not.toEqual(aliceDomains.map((d) => d.name));

    const made = await alice.POST('/spaces', { body: { name: 'Only Alice', color: 2 } });
    expect(made.response.status).toBe(201);
    const id = made.data?.data.id as number;
    expect((await bob.GET('/spaces/{id}', { params: { path: { id } } })).response.status).toBe(404);
    expect((await bob.GET('/spaces')).data?.meta.total).toBe(3);
    expect((await alice.GET('/spaces')).data?.meta.total).toBe(4);
  });

  it('behaves as the service does: 409 for a name held elsewhere, 404 after delete, pages', async () => {
    const { url } = await shared();
    const dave = apiClient(url, 'dss_sandbox_dave');
    const carol = apiClient(url, 'dss_sandbox_carol');
    const seeded = (await dave.GET('/domains')).data?.data[0];
    expect(seeded?.name).toMatch(/\.dss-test\.example$/);
    // A name of the test zone verifies at once in the sandbox, and is then held.
    const verified = await dave.POST('/domains/{id}/verify', { params: { path: { id: seeded?.id ?? 0 } } });
    expect(verified.data?.data).toMatchObject({ status: 'active', observation: { code: 'test_zone' } });
    const refused = await carol.POST('/domains', { body: { name: seeded?.name ?? '' } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ type: '/problems/domain-held-elsewhere' });

    const id = (await dave.GET('/spaces')).data?.data[0]?.id as number;
    expect((await dave.DELETE('/spaces/{id}', { params: { path: { id } } })).response.status).toBe(204);
    expect((await dave.GET('/spaces/{id}', { params: { path: { id } } })).response.status).toBe(404);

    for (let i = 1; i <= 9; i++) await dave.POST('/spaces', { body: { name: `Paged ${i}` } });
    const page = await dave.GET('/spaces', { params: { query: { per_page: 10, page: 2 } } });
    expect(page.data?.meta).toMatchObject({ current_page: 2, last_page: 2, total: 11 });
    expect(page.data?.data).toHaveLength(1);
  });

  it.each([
    { what: 'a token without the dss_ prefix', token: 'sandbox_alice' },
    { what: 'a token too short', token: 'dss_abc' },
  ])('refuses $what with 401 saying which keys it takes', async ({ token }) => {
    const { url } = await shared();
    const response = await fetch(`${url}/domains`, { headers: { Authorization: `Bearer ${token}` } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await response.json()) as { detail: string }).detail).toContain('dss_');
  });

  it('refuses to start with WORKERS > 1, saying why (one in-memory database per process)', async () => {
    const exit = await runToExit(SERVICE, ['--sandbox'], {
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      DATABASE_URL,
      WORKERS: '2',
    });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('WORKERS=2 cannot run the sandbox');
    expect(exit.stderr).toContain('run it with WORKERS=1');
  });

  it('starts over after a restart', async () => {
    const first = await shared();
    const erin = apiClient(first.url, 'dss_sandbox_erin');
    expect((await erin.POST('/spaces', { body: { name: 'Gone tomorrow' } })).response.status).toBe(201);
    expect((await erin.GET('/spaces')).data?.meta.total).toBe(4);
    expect((await first.server.stop()).code).toBe(0);

    const second = await sandbox();
    const again = await apiClient(second.url, 'dss_sandbox_erin').GET('/spaces');
    expect(again.data?.meta.total).toBe(3);
    expect(again.data?.data.map((s) => s.name)).not.toContain('Gone tomorrow');
    await second.server.stop();
  });
});

const EVERY_SCOPE = SCOPES.map((scope) => scope.replace(':', '.')).join('~');

describe('the conformance runner against the sandbox', { timeout: 300_000 }, () => {
  it('passes with every check on (profile server), none skipped but redelivery on a record', async () => {
    // A quota the run's own requests stay under, which --rate-limit-budget then spends to see the 429; its
    // wrong-key probes must not trip the failed-authentication guard (the runner would wait out each 429).
    // The sandbox's own webhook settings: its targets may be on this machine, so the runner's receiver gets the
    // deliveries (the webhook checks end to end) and the endpoint checks use URLs under it.
    const { url } = await sandbox({
      RATE_LIMIT: '3000/60',
      AUTH_FAILURE_LIMIT: '100000/60',
    });
    const exit = await runToExit(
      'scripts/conformance/main.ts',
      [
        // Every scope by name: api_keys:write is held only so, and the run makes keys too.
        ...['--base-url', url, '--api-key', `dss_conformance_one~${EVERY_SCOPE}`],
        ...['--second-api-key', `dss_conformance_two~${EVERY_SCOPE}`],
        ...['--read-only-api-key', 'dss_conformance_one~read'],
        // A budget of two windows: a run slowed by a busy machine may reach the end of its first one while spending.
        ...['--profile', 'server', '--cases', '10', '--seed', '42', '--rate-limit-budget', '6000', '--no-state'],
      ],
      {},
      240_000,
    );
    // The runner cannot make an event to redeliver (events come of writes it does not know of), nor a recovery of
    // an endpoint: those checks that need such a record are the only skips, as in own-server.test.ts.
    expect(exit.stdout).toMatch(/PASSED: \d+ checks passed, \d+ skipped/);
    const skips = exit.stdout.split('\n').filter((line) => /^- \w+ ×\d+ \(/.test(line));
    const expected = /\((events_redeliver|webhook-endpoints_recoveries_show|webhook-endpoints_recoveries)\)/;
    expect(skips.filter((line) => !expected.test(line))).toEqual([]);
    expect(exit.code).toBe(0);
  });
});
