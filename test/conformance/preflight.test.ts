// The runner checks first that the target can be tested at all, and stops with one sentence and exit code 2
// when it cannot: a base URL without /api/v1 (every request 404), a wrong key (every request 401), no answer.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/conformance-cli.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startServer();
  account = await server.account('preflight');
});
afterAll(() => server.close());

/** A loopback port nothing listens on: one the system just handed out and took back. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The sentence the run stopped with: the stderr line after the seed. */
const stopLine = (stderr: string) => stderr.split('\n').find((line) => line.startsWith('conformance: ')) ?? stderr;

describe('the preflight', () => {
  it('stops a base URL without /api/v1 with one sentence naming it', async () => {
    const origin = server.apiUrl.replace(/\/api\/v1$/, '');
    const run = await runCli(['--base-url', origin, '--api-key', account.key, '--cases', '2']);
    expect(run.code).toBe(2);
    expect(stopLine(run.stderr)).toBe(
      `conformance: every request got 404 (GET ${origin}/domains, GET ${origin}/spaces) — does --base-url include /api/v1? (try ${origin}/api/v1)`,
    );
    expect(run.stdout).toBe('');
  }, 60_000);

  it('stops a wrong key', async () => {
    const run = await runCli(['--base-url', server.apiUrl, '--api-key', 'dss_000000000000_nope', '--cases', '2']);
    expect(run.code).toBe(2);
    expect(stopLine(run.stderr)).toMatch(
      /^conformance: every request got 401 with the key of --api-key \(or DSS_API_KEY\)/,
    );
    expect(run.stdout).toBe('');
  }, 60_000);

  it('stops a wrong second key', async () => {
    const args = ['--base-url', server.apiUrl, '--api-key', account.key, '--second-api-key', 'dss_000000000000_nope'];
    const run = await runCli([...args, '--cases', '2']);
    expect(run.code).toBe(2);
    expect(stopLine(run.stderr)).toMatch(/^conformance: every request got 401 with the key of --second-api-key/);
  }, 60_000);

  it('stops a host that does not answer', async () => {
    const base = `http://127.0.0.1:${await closedPort()}/api/v1`;
    const run = await runCli(['--base-url', base, '--api-key', account.key, '--cases', '2']);
    expect(run.code).toBe(2);
    expect(stopLine(run.stderr)).toMatch(
      /^conformance: cannot reach http:\S+ \(.*ECONNREFUSED.*\) — is the service running/,
    );
    expect(stopLine(run.stderr)).toContain(base);
  }, 60_000);

  it('lets a testable target through: a run on the right base URL and key starts its checks', async () => {
    const run = await runCli(['--base-url', server.apiUrl, '--api-key', account.key, '--only', 'auth_required']);
    expect(run.stderr).not.toContain('conformance: ');
    expect(run.stdout).toContain('PASSED');
    expect(run.code).toBe(0);
  }, 60_000);
});
