// The runner with a narrow key judges it fairly: what the key may not do is skipped ("the key lacks X"), read
// from the deployment's 403s, and the run passes when all it could check passed; an expired or revoked key stops
// the run with the deployment's own words; --cases never spends more than the share of the quota the run announced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PreflightError } from '../../scripts/conformance/preflight.js';
import { runConformance } from '../../scripts/conformance/run.js';
import { issueKey, revokeKey } from '../../server/accounts/keys.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer({
    rateLimit: { perKey: { limit: 600, windowSeconds: 60 }, authFailures: { limit: 1000, windowSeconds: 60 } },
  });
});
afterAll(() => server.close());

describe('a key narrowed to spaces:read', () => {
  it('passes, skipping what the key lacks and naming the scope', async () => {
    const { key } = await issueKey(server.db, 'narrow-runner', { scopes: ['spaces:read'] });
    const result = await runConformance({ baseUrl: server.apiUrl, apiKey: key, seed: 3, cases: 2 });
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
    const reasons = [...result.results.skips.values()].map((skip) => skip.reason);
    for (const scope of ['domains:read', 'spaces:write', 'webhooks:read', 'events:read']) {
      expect(reasons).toContain(`skipped: the key lacks ${scope}`);
    }
    // What it may do was checked: spaces are listed and shown.
    expect(result.results.tallies.get('spaces_list')?.get('valid_input_accepted')?.pass).toBeGreaterThan(0);
    expect(result.report).toMatch(/^PASSED: \d+ checks passed, \d+ skipped$/m);
    expect(result.report).toMatch(/^the key lacks (\S+, )*domains:read, .*what needs them is skipped, not failed$/m);
  }, 120_000);
});

describe('a key the deployment refuses', () => {
  it.each([
    ['expired', /expired at/],
    ['revoked', /Unauthorized/],
  ])('stops a run with the %s key, repeating the deployment', async (state, said) => {
    const { key } = await issueKey(server.db, `refused-${state}`, {
      ...(state === 'expired' ? { expiresAt: new Date(Date.now() - 60_000) } : {}),
    });
    if (state === 'revoked') await revokeKey(server.db, key);
    const run = runConformance({ baseUrl: server.apiUrl, apiKey: key, seed: 1, cases: 1 });
    await expect(run).rejects.toBeInstanceOf(PreflightError);
    const message = await run.catch((error: Error) => error.message);
    expect(message).toMatch(said);
    expect(message).toContain('the deployment says');
    expect(message).not.toContain('is it a key of this deployment');
  });
});

describe('--cases against a quota', () => {
  it('never spends more than the share it announced, sizing the cases down and saying so', async () => {
    const { key } = await issueKey(server.db, 'cases-runner');
    const lines: string[] = [];
    let sent = 0;
    const result = await runConformance({
      baseUrl: server.apiUrl,
      apiKey: key,
      seed: 5,
      cases: 10,
      only: ['valid_input_accepted', 'invalid_input_rejected'],
      log: (line) => lines.push(line),
      onExchange: (exchange) => {
        if (exchange.request.headers.Authorization === `Bearer ${key}`) sent++;
      },
    });
    const share = Number(/this run's share of the key's quota: (\d+) requests/.exec(lines.join('\n'))?.[1]);
    expect(share).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(share);
    expect(lines.join('\n')).toMatch(/--cases asked for about \d+ requests .*sized to the quota/);
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
  }, 120_000);
});
