// The runner's scope_enforced check against our server: a read-only key is served by every operation that
// declares only read scopes and refused with 403 naming the scope by every other; a key passed as read-only that
// can write fails the check, naming the operation; and without a read-only key the check is skipped, saying why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConformanceResult, runConformance } from '../../scripts/conformance/run.js';
import { scopeFinding } from '../../scripts/conformance/scopes.js';
import { READ_SCOPES } from '../../server/accounts/key-policy.js';
import { issueKey } from '../../server/accounts/keys.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let first: TestAccount;

beforeAll(async () => {
  server = await startServer();
  first = await server.account('scope-runner');
});
afterAll(() => server.close());

const run = (readOnlyApiKey?: string): Promise<ConformanceResult> =>
  runConformance({
    baseUrl: server.apiUrl,
    apiKey: first.key,
    ...(readOnlyApiKey ? { readOnlyApiKey } : {}),
    seed: 7,
    cases: 1,
    only: ['scope_enforced'],
  });

describe('scope_enforced', () => {
  it('passes on every operation with a read-only key', async () => {
    const { key } = await issueKey(server.db, 'scope-runner', { scopes: READ_SCOPES });
    const result = await run(key);
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    const operations = result.results.tallies.size;
    expect(result.results.ofCheck('scope_enforced')).toMatchObject({ pass: operations, fail: 0, skip: 0 });
    expect(operations).toBeGreaterThanOrEqual(10);
  }, 60_000);

  it('fails every write when the "read-only" key can write', async () => {
    const result = await run(first.key);
    const failed = [...result.results.failures.values()].filter((f) => f.check === 'scope_enforced');
    expect(failed.map((f) => f.subject).sort()).toContain('spaces_delete');
    expect(failed.every((f) => /not 403/.test(f.message))).toBe(true);
    expect(result.passed).toBe(false);
  }, 60_000);

  it('is skipped without a read-only key, saying how to give one', async () => {
    const result = await run();
    expect(result.results.ofCheck('scope_enforced').skip).toBeGreaterThan(0);
    expect(result.report).toContain('DSS_READONLY_API_KEY');
  }, 60_000);
});

describe('scopeFinding', () => {
  const reply = (status: number, headers: Record<string, string> = {}, detail = '') => ({
    request: { method: 'DELETE', url: 'http://x/spaces/1', headers: {} },
    reply: { status, headers, text: '', json: { detail } },
  });
  it.each([
    [['spaces:read'], reply(200), undefined],
    [['spaces:read'], reply(404), undefined],
    [['spaces:read'], reply(403), /was refused \(403\)/],
    [['spaces:write'], reply(204), /got 204, not 403/],
    [['spaces:write'], reply(403, { 'x-accepted-scopes': 'spaces:write' }), undefined],
    [['spaces:write'], reply(403, {}, 'lacks the scope spaces:write'), undefined],
    [['spaces:write'], reply(403, {}, 'Forbidden'), /does not name the scope/],
  ])('%j answered %j', (declared, exchange, finding) => {
    const found = scopeFinding(declared, exchange as never);
    if (finding) expect(found).toMatch(finding);
    else expect(found).toBeUndefined();
  });
});
