// The runner checks first that the target can be tested at all, and stops with one sentence and exit code 2
// when it cannot: a base URL without /api/v1 (every request 404), a wrong key (every request 401), no answer.
// The command line once (its exit code and output); the other targets through runConformance, which it calls.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreflightError } from '../../scripts/conformance/preflight.js';
import { type ConformanceOptions, runConformance } from '../../scripts/conformance/run.js';
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

/** The sentence a run in this process stopped with, as the command line prints it before exiting 2. */
async function stoppedWith(options: Omit<ConformanceOptions, 'seed' | 'cases'>): Promise<string> {
  const error = await runConformance({ seed: 1, cases: 2, ...options }).then(
    () => new Error('the run was not stopped'),
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(PreflightError);
  return `conformance: ${(error as Error).message}`;
}

describe('the preflight', () => {
  it('stops a base URL without /api/v1 with one sentence naming it', async () => {
    const origin = server.apiUrl.replace(/\/api\/v1$/, '');
    const run = await runCli(['--base-url', origin, '--api-key', account.key, '--cases', '2']);
    expect(run.code).toBe(2);
    expect(stopLine(run.stderr)).toBe(
      `conformance: every request got 404 (GET ${origin}/domains, GET ${origin}/spaces, GET ${origin}/webhook-endpoints, GET ${origin}/event-types, GET ${origin}/events, GET ${origin}/api-keys, GET ${origin}/api-keys/current) — does --base-url include /api/v1? (try ${origin}/api/v1)`,
    );
    expect(run.stdout).toBe('');
  }, 60_000);

  it('stops a wrong key', async () => {
    expect(await stoppedWith({ baseUrl: server.apiUrl, apiKey: 'dss_000000000000_nope' })).toMatch(
      /^conformance: every request got 401 with the key of --api-key \(or DSS_API_KEY\)/,
    );
  });

  it('stops a wrong second key', async () => {
    const sentence = await stoppedWith({
      baseUrl: server.apiUrl,
      apiKey: account.key,
      secondApiKey: 'dss_000000000000_nope',
    });
    expect(sentence).toMatch(/^conformance: every request got 401 with the key of --second-api-key/);
  });

  it('stops a host that does not answer', async () => {
    const base = `http://127.0.0.1:${await closedPort()}/api/v1`;
    const sentence = await stoppedWith({ baseUrl: base, apiKey: account.key });
    expect(sentence).toMatch(/^conformance: cannot reach http:\S+ \(.*ECONNREFUSED.*\) — is the service running/);
    expect(sentence).toContain(base);
  });

  it('lets a testable target through: a run on the right base URL and key starts its checks', async () => {
    const result = await runConformance({
      baseUrl: server.apiUrl,
      apiKey: account.key,
      seed: 1,
      only: ['auth_required'],
    });
    expect(result.results.ofCheck('auth_required').pass).toBeGreaterThan(0);
    expect(result.passed).toBe(true);
  });
});
