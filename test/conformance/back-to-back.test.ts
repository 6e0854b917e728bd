// Conformance runs back to back against a deployment with a small failed-authentication budget per address: no
// run waits on a 429, each spends at most half of what is left to it, and the keys come from the environment,
// so that neither npm's echo of the command line nor the output carries them.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failedAuthAllowance, probeOrder } from '../../scripts/conformance/probes.js';
import { ROOT } from '../service/process.js';
import { runCli } from '../support/conformance-cli.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

describe('the credential probes’ share of the failed-authentication budget', () => {
  it.each([
    { budget: undefined, allowance: undefined },
    { budget: { limit: 20, remaining: 20 }, allowance: 10 },
    { budget: { limit: 20, remaining: 10 }, allowance: 8 },
    { budget: { limit: 20, remaining: 2 }, allowance: 0 },
    { budget: { limit: 20, remaining: 0 }, allowance: 0 },
    { budget: { limit: 5, remaining: 5 }, allowance: 3 },
  ])('$budget allows $allowance', ({ budget, allowance }) => {
    expect(failedAuthAllowance(budget)).toBe(allowance);
  });

  it('tries every kind of bad credential first, each on another operation, then operation by operation', () => {
    const probes = ['a', 'b', 'c'].flatMap((id) =>
      ['missing', 'wrong_key', 'malformed'].map((variant, rank) => ({ operation: { id }, variant, rank })),
    );
    expect(probeOrder(probes).map((probe) => `${probe.variant}:${probe.operation.id}`)).toEqual([
      'missing:a',
      'wrong_key:b',
      'malformed:c',
      'missing:b',
      'missing:c',
      'wrong_key:a',
      'wrong_key:c',
      'malformed:a',
      'malformed:b',
    ]);
  });
});

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
const LIMIT = 8;

beforeAll(async () => {
  server = await startServer({ rateLimit: { authFailures: { limit: LIMIT, windowSeconds: 600 } } });
  alice = await server.account('alice');
  bob = await server.account('bob');
});
afterAll(() => server.close());

/** `npm run conformance -- …` as the guide shows it, killed if it hangs. */
function npmRun(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', 'conformance', '--', ...args, '--no-state'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 55_000,
      killSignal: 'SIGKILL',
    });
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('runs back to back', () => {
  it('never wait on the address’s failed-authentication budget, nor use it up, nor print a key', async () => {
    const env = { DSS_API_KEY: alice.key, DSS_SECOND_API_KEY: bob.key };
    const args = ['--base-url', server.apiUrl, '--only', 'auth_required'];
    const first = await npmRun(args, env);
    expect(first.output).toContain(`> tsx scripts/conformance/main.ts --base-url ${server.apiUrl}`);
    const later = [await runCli(args, env), await runCli(args, env)].map((run) => ({
      code: run.code,
      output: run.stdout + run.stderr,
    }));
    const spent = [];
    for (const run of [first, ...later]) {
      expect(run.code, run.output).toBe(0);
      expect(run.output).not.toMatch(/waiting \d+ s|answered 429/);
      for (const key of [alice.key, bob.key]) expect(run.output).not.toContain(key);
      spent.push(Number(/the \d+ credential probes spend at most (\d+)/.exec(run.output)?.[1]));
    }
    // Half of the budget, then at most what is left of it but two, then nothing: the budget is never used up.
    expect(spent[0]).toBe(LIMIT / 2);
    expect(spent[1]).toBeGreaterThan(0);
    expect(spent[1]).toBeLessThanOrEqual(LIMIT / 2 - 2);
    expect(spent[2]).toBe(0);
    expect(later[1]?.output).toContain('a run spends at most half of that');
    expect((await fetch(`${server.apiUrl}/domains`)).status).toBe(401);
  }, 180_000);

  it('warns when a key is given on the command line, where npm would print it', async () => {
    const run = await runCli(['--base-url', server.apiUrl, '--api-key', alice.key, '--only', 'method_not_allowed']);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain('warning: --api-key puts a key on the command line');
    expect(run.stderr).toContain('export DSS_API_KEY instead');
  }, 60_000);
});
