// The conformance runner against our own server: a few hundred generated cases per operation, every check run
// and passed, nothing skipped but the opt-in rate_limited, nothing left behind; once through the real command
// line; and the rate-limit budget spent against a small quota.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELP, parseArgs, UsageError } from '../../scripts/conformance/args.js';
import { CHECKS, type CheckName } from '../../scripts/conformance/results.js';
import { type ConformanceResult, runConformance } from '../../scripts/conformance/run.js';
import { READ_SCOPES, SCOPES } from '../../server/accounts/key-policy.js';
import { issueKey } from '../../server/accounts/keys.js';
import { runCli } from '../support/conformance-cli.js';
import { apiClient, startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let first: TestAccount;
let second: TestAccount;
let readOnly: string;

// Rate limits on, with quotas the run cannot exhaust: their fields are checked on every answer.
const GENEROUS = { limit: 1_000_000, windowSeconds: 60 };

beforeAll(async () => {
  // The runner creates many webhook endpoints in one account: room for them all. Private targets allowed (the
  // test servers' default) and a delivery worker: the runner's own receiver on 127.0.0.1 gets the deliveries,
  // and the webhook checks are made end to end.
  server = await startServer({
    rateLimit: { perKey: GENEROUS, authFailures: GENEROUS },
    webhooks: { maxEndpoints: 1000 },
    deliver: true,
  });
  // Every scope by name: the run makes keys too, and api_keys:write is held only so.
  first = await everyScope('conformance-first');
  second = await everyScope('conformance-second');
  readOnly = (await issueKey(server.db, 'conformance-first', { scopes: READ_SCOPES })).key;
});
afterAll(() => server.close());

async function everyScope(name: string): Promise<TestAccount> {
  const { key } = await issueKey(server.db, name, { scopes: [...SCOPES] });
  return { name, key, client: apiClient(server.apiUrl, key), json: apiClient(server.apiUrl, key, 'json') };
}

async function totalRecords(account: TestAccount): Promise<number> {
  const domains = await account.client.GET('/domains');
  const spaces = await account.client.GET('/spaces');
  return (domains.data?.meta.total ?? -1) + (spaces.data?.meta.total ?? -1);
}

describe('a full run against our server', () => {
  let result: ConformanceResult;

  beforeAll(async () => {
    result = await runConformance({
      baseUrl: server.apiUrl,
      apiKey: first.key,
      secondApiKey: second.key,
      readOnlyApiKey: readOnly,
      seed: 20261121,
      cases: 200,
    });
  }, 300_000);

  // The runner cannot make an event to redeliver (events come of other writes, which it does not know of), so
  // events_redeliver is tried on an unknown id only: its checks that need a record are skipped; so are those of
  // a recovery of an endpoint, which it does not start, and the walk of an endpoint's recoveries past a page.
  const redeliverSkips = (check?: string) =>
    ['events_redeliver', 'webhook-endpoints_recoveries_show', 'webhook-endpoints_recoveries']
      .flatMap((operation) => [...(result.results.tallies.get(operation)?.entries() ?? [])])
      .filter(([name]) => check === undefined || name === check)
      .reduce((sum, [, tally]) => sum + tally.skip, 0);

  it('passes with no failure, and no skip but the opt-in rate_limited (and events_redeliver on a record)', () => {
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
    expect(result.results.totals()).toMatchObject({ fail: 0, skip: 1 + redeliverSkips() });
    expect(result.results.ofCheck('rate_limited')).toMatchObject({ pass: 0, skip: 1 });
  });

  it.each(CHECKS.filter((check) => check !== 'rate_limited'))('ran and passed %s', (check) => {
    const tally = result.results.ofCheck(check);
    expect(tally.pass).toBeGreaterThan(0);
    expect(tally).toMatchObject({ fail: 0, skip: redeliverSkips(check) });
  });

  it('ran a few hundred generated cases for the operations that take input', () => {
    const valid = result.results.tallies.get('domains_store')?.get('valid_input_accepted')?.pass ?? 0;
    const invalid = result.results.tallies.get('spaces_list')?.get('invalid_input_rejected')?.pass ?? 0;
    expect(valid).toBe(200);
    expect(invalid).toBeGreaterThan(150);
  });

  it.each(['domains_show', 'domains_update', 'domains_patch', 'domains_delete', 'spaces_show', 'spaces_delete'])(
    'ran 200 id-driven cases on %s: 2xx on records it made, the documented 404 on ids the account does not own',
    (id) => {
      const tally = (check: CheckName) => result.results.tallies.get(id)?.get(check)?.pass ?? 0;
      expect(tally('valid_input_accepted')).toBeGreaterThan(120);
      expect(tally('unknown_id_not_found')).toBeGreaterThan(20);
      // A show also counts the reads that make sure an unknown id is unused before a write is sent to it.
      if (!id.endsWith('_show')) expect(tally('valid_input_accepted') + tally('unknown_id_not_found')).toBe(200);
    },
  );

  it('deleted only records it made for deleting, and read each back as 404', () => {
    const deletes = result.results.tallies.get('domains_delete');
    expect(deletes?.get('deleted_gone')?.pass).toBe(deletes?.get('valid_input_accepted')?.pass);
  });

  it('deletes every record it made', async () => {
    expect(result.leftBehind).toBe(0);
    expect(await totalRecords(first)).toBe(0);
    expect(await totalRecords(second)).toBe(0);
  });

  it('judges the deliveries to its own receiver: signatures, payloads, a retry, a redelivery, a rotation', () => {
    expect(result.report).toMatch(
      /retry: the test event answered 500, tried again [\d.]+ s later with the same webhook-id evt_/,
    );
    expect(result.report).toMatch(/redelivery: event evt_\w+ came again with the same webhook-id/);
    expect(result.report).toContain('rotation: the next delivery carried 2 signatures, one verifying with each secret');
    expect(result.results.ofCheck('webhook_signature').pass).toBeGreaterThanOrEqual(5);
  });

  it('says what it made and deleted', () => {
    expect(result.report).toMatch(/^ {2}webhook-endpoints: \d+ created, \d+ deleted$/m);
    expect(result.report).toContain('every record the run made is deleted');
  });

  it('prints the seed and a table row per operation', () => {
    expect(result.report).toContain('seed 20261121');
    for (const operation of ['domains_list', 'domains_store', 'spaces_patch', 'spaces_delete']) {
      expect(result.report).toMatch(new RegExp(`^${operation} `, 'm'));
    }
    expect(result.report).toMatch(new RegExp(`^PASSED: \\d+ checks passed, ${1 + redeliverSkips()} skipped$`, 'm'));
  });
});

describe('duplicate creates when the spec names no unique field', () => {
  it('sends an identical create twice and accepts the documented 409 for the second', async () => {
    const seen: number[] = [];
    const result = await inTempDir(async (dir) => {
      const spec = join(dir, 'openapi.yaml');
      const text = await readFile(new URL('../../generated/openapi.yaml', import.meta.url), 'utf8');
      await writeFile(spec, text.replace('Unique across the whole service.', ''));
      return runConformance({
        baseUrl: server.apiUrl,
        apiKey: first.key,
        seed: 5,
        cases: 4,
        spec,
        only: ['duplicate_conflict'],
        onExchange: (exchange, operation) => {
          if (operation === 'domains_store') seen.push(exchange.reply.status);
        },
      });
    });
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    // Four for each create that documents 409: domains_store, spaces_store and api-keys_store (an Idempotency-Key
    // in use) and webhook-endpoints_store (too many endpoints).
    expect(result.results.ofCheck('duplicate_conflict')).toMatchObject({ pass: 16, fail: 0 });
    expect(seen.filter((status) => status === 409)).toHaveLength(4);
    expect(result.leftBehind).toBe(0);
  }, 60_000);
});

/** Runs fn with a fresh temporary folder, removed afterwards whatever happens. */
async function inTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'conformance-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('the command line', () => {
  it('exits 0 on a clean run, prints the seed and writes JUnit XML', async () => {
    const { run, xml } = await inTempDir(async (dir) => {
      const junit = join(dir, 'junit.xml');
      const run = await runCli([
        '--base-url',
        server.apiUrl,
        '--api-key',
        first.key,
        '--second-api-key',
        second.key,
        '--cases',
        '3',
        '--seed',
        '99',
        '--junit',
        junit,
      ]);
      return { run, xml: await readFile(junit, 'utf8').catch(() => '') };
    });
    expect(run.stdout).toContain('PASSED');
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^seed 99$/m);
    expect(run.stdout).not.toContain(first.key);
    expect(xml).toMatch(/^<\?xml/);
    expect(xml).toContain('<testsuite name="domains_store"');
    expect(xml).toContain('<testcase name="stateful_scenario" classname="domains"/>');
  }, 120_000);

  it('exits 2 with the usage on a bad command line', async () => {
    const run = await runCli(['--api-key', 'k']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--base-url is required/);
    expect(run.stderr).toContain(
      'Usage: DSS_API_KEY=<key> [DSS_SECOND_API_KEY=<key>] npm run conformance -- --base-url <url>',
    );
  });

  // The command line's other refusals, from the parser it exits 2 on (the case above).
  it.each([
    [
      'an unknown check in --only',
      ['--base-url', 'http://127.0.0.1:1', '--api-key', 'k', '--only', 'nope'],
      /unknown check nope/,
    ],
    ['an unknown option', ['--base-url', 'http://127.0.0.1:1', '--api-key', 'k', '--fast'], /unknown argument --fast/],
  ])('refuses %s', (_name, args, message) => {
    expect(() => parseArgs(args, {})).toThrow(UsageError);
    expect(() => parseArgs(args, {})).toThrow(message);
  });

  it('documents every option and check in --help', () => {
    expect(parseArgs(['--help'], {}).help).toBe(true);
    for (const option of [
      '--base-url',
      '--api-key',
      '--second-api-key',
      '--seed',
      '--cases',
      '--junit',
      '--spec',
      '--only',
    ]) {
      expect(HELP).toContain(option);
    }
    for (const check of CHECKS) expect(HELP).toContain(check);
  });
});

describe('the rate-limit budget (--rate-limit-budget)', () => {
  it('spends a small quota until the 429 with Retry-After, checking the fields on the way', async () => {
    const limited = await startServer({ rateLimit: { perKey: { limit: 25, windowSeconds: 60 } } });
    try {
      const account = await limited.account();
      const result = await runConformance({
        baseUrl: limited.apiUrl,
        apiKey: account.key,
        seed: 1,
        cases: 1,
        only: ['rate_limited', 'rate_limit_headers'],
        rateLimitBudget: 60,
      });
      expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
      expect(result.results.ofCheck('rate_limited')).toEqual({ pass: 1, fail: 0, skip: 0 });
      expect(result.results.ofCheck('rate_limit_headers').pass).toBeGreaterThan(20);
    } finally {
      await limited.close();
    }
  });

  it('fails a target that never answers 429 within the budget, and skips the fields it never sends', async () => {
    const unlimited = await startServer({ webhooks: { maxEndpoints: 1000 } });
    try {
      const account = await unlimited.account();
      const result = await runConformance({
        baseUrl: unlimited.apiUrl,
        apiKey: account.key,
        seed: 1,
        cases: 1,
        only: ['rate_limited', 'rate_limit_headers'],
        rateLimitBudget: 15,
      });
      expect(result.passed).toBe(false);
      expect([...result.results.failures.values()].map((f) => [f.check, f.message])).toEqual([
        ['rate_limited', 'no 429 within the budget of 15 requests'],
      ]);
      expect(result.results.ofCheck('rate_limit_headers')).toMatchObject({ pass: 0, fail: 0 });
      expect(result.report).toContain('the target sent no RateLimit fields');
    } finally {
      await unlimited.close();
    }
  });
});
