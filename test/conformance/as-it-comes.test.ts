// The runner against a deployment as it comes: the default quotas (600 requests a minute per key, 20 failed
// authentications a minute per address), the default webhook settings (https only, public targets, 20 endpoints
// an account) and records of the accounts' own. Two runs back to back both pass without waiting out a 429,
// the refusals the contract allows are skipped with the deployment's words, and the accounts hold what they held
// before, also after a run interrupted half way.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceResult, runConformance } from '../../scripts/conformance/run.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let first: TestAccount;
let second: TestAccount;
let dir: string;

beforeAll(async () => {
  server = await startServer({
    rateLimit: { perKey: { limit: 600, windowSeconds: 60 }, authFailures: { limit: 20, windowSeconds: 60 } },
    webhooks: DEFAULT_WEBHOOK_SETTINGS,
  });
  first = await server.account('as-it-comes-first');
  second = await server.account('as-it-comes-second');
  dir = await mkdtemp(join(tmpdir(), 'conformance-as-it-comes-'));
  // Records of the accounts' own, which the runs must leave as they are.
  await first.json.POST('/spaces', { body: { name: 'Kept' } });
  await second.json.POST('/domains', { body: { name: 'kept.example' } });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

/** Each account's spaces, domains and webhook endpoints, as a list request answers them. */
async function holdings(account: TestAccount): Promise<unknown> {
  const [spaces, domains, endpoints] = await Promise.all(
    ['/spaces', '/domains', '/webhook-endpoints'].map(async (path) => {
      // The runs before may have spent the key's quota for this window: wait as Retry-After says (at most twice).
      for (let tries = 0; ; tries++) {
        const response = await fetch(`${server.apiUrl}${path}`, {
          headers: { Authorization: `Bearer ${account.key}` },
        });
        if (response.status !== 429 || tries >= 2) {
          expect(response.status).toBe(200);
          return ((await response.json()) as { data: unknown[] }).data;
        }
        await new Promise((resolve) => setTimeout(resolve, (Number(response.headers.get('retry-after')) || 1) * 1000));
      }
    }),
  );
  return { spaces, domains, endpoints };
}

describe('two runs back to back against the defaults', { timeout: 240_000 }, () => {
  const logs: string[][] = [];
  const runs: ConformanceResult[] = [];
  let before: unknown[];

  beforeAll(async () => {
    before = [await holdings(first), await holdings(second)];
    for (const seed of [1, 2]) {
      const lines: string[] = [];
      logs.push(lines);
      runs.push(
        await runConformance({
          baseUrl: server.apiUrl,
          apiKey: first.key,
          secondApiKey: second.key,
          seed,
          stateFile: join(dir, 'state.json'),
          log: (line) => lines.push(line),
        }),
      );
    }
  });

  it('both pass, and neither waits out a 429', () => {
    for (const run of runs) expect(run.results.failures.size === 0 ? '' : run.report).toBe('');
    for (const lines of logs) expect(lines.filter((line) => /waiting \d+ s|answered 429/.test(line))).toEqual([]);
  });

  it('judges the refused webhook URLs as the contract allows, and says why the webhooks were not checked', () => {
    const report = runs[0]?.report ?? '';
    expect(report).toMatch(/refused as the contract allows \(422 unsafe-webhook-url/);
    expect(report).toMatch(/not checked: the deployment will not call the runner's receiver http:\/\/127\.0\.0\.1:\d+/);
    expect(runs[0]?.results.ofCheck('webhook_signature')).toMatchObject({ pass: 0, fail: 0, skip: 1 });
  });

  it('leaves both accounts as they were, and says what it made and deleted', async () => {
    expect([await holdings(first), await holdings(second)]).toEqual(before);
    for (const run of runs) {
      expect(run.leftBehind).toBe(0);
      expect(run.report).toMatch(/^ {2}spaces: (\d+) created, \1 deleted$/m);
      expect(run.report).toContain('every record the run made is deleted');
    }
  });

  it('rotates the credential probes: the second run probes other operations, and the report shows coverage', () => {
    const coverage = (run?: ConformanceResult) =>
      /auth_required: (\d+) of (\d+) this run; (\d+) of \2/.exec(run?.report ?? '');
    const [, now1, total, ever1] = coverage(runs[0]) ?? [];
    const [, now2, , ever2] = coverage(runs[1]) ?? [];
    expect(Number(now1)).toBeGreaterThan(0);
    expect(Number(ever1)).toBe(Number(now1));
    expect(Number(ever2)).toBe(Number(now1) + Number(now2));
    expect(Number(total)).toBeGreaterThan(Number(ever2));
  });
});

describe('a run interrupted half way', { timeout: 120_000 }, () => {
  it('stops, deletes what it made and says so', async () => {
    const before = [await holdings(first), await holdings(second)];
    const controller = new AbortController();
    const result = await runConformance({
      baseUrl: server.apiUrl,
      apiKey: first.key,
      secondApiKey: second.key,
      seed: 3,
      signal: controller.signal,
      // Once the records are made and the checks under way: as Ctrl-C would.
      log: (line) => {
        if (line.startsWith('credentials:')) controller.abort('SIGINT');
      },
    });
    expect(result.passed).toBe(false);
    expect(result.interrupted).toMatch(/^interrupted \(SIGINT\)/);
    expect(result.report).toContain('INTERRUPTED');
    expect(result.report).toMatch(/^ {2}domains: [1-9]\d* created/m);
    expect(result.leftBehind).toBe(0);
    expect([await holdings(first), await holdings(second)]).toEqual(before);
  });
});
