// The runner against Prism's mock of the same spec: every check a stateless mock can honour passes, and the
// rest are reported as skipped with their reason, never as passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STATEFUL_CHECKS } from '../../scripts/conformance/results.js';
import { type ConformanceResult, runConformance } from '../../scripts/conformance/run.js';
import { type Prism, startPrism } from '../support/prism.js';

let prism: Prism;

beforeAll(async () => {
  prism = await startPrism({ mode: 'mock' });
});
afterAll(() => prism.close());

const KEY = 'dss_000000000000_any-token-the-mock-accepts';

describe('with --profile mock', () => {
  let result: ConformanceResult;

  beforeAll(async () => {
    result = await runConformance({
      baseUrl: prism.url,
      apiKey: KEY,
      secondApiKey: `${KEY}2`,
      seed: 7,
      cases: 40,
      profile: 'mock',
    });
  }, 120_000);

  it('passes the stateless checks', () => {
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
    for (const check of [
      'no_server_error',
      'response_schema',
      'valid_input_accepted',
      'invalid_input_rejected',
      'odd_ids',
    ] as const) {
      expect(result.results.ofCheck(check).pass, check).toBeGreaterThan(0);
    }
  });

  it.each(STATEFUL_CHECKS)('skips %s with the reason, passing none', (check) => {
    const tally = result.results.ofCheck(check);
    expect(tally.pass).toBe(0);
    expect(tally.skip).toBeGreaterThan(0);
    const reasons = [...result.results.skips.values()].filter((s) => s.check === check).map((s) => s.reason);
    expect(reasons.join('\n')).toMatch(/a mock keeps no state/);
  });

  it('names each thing the mock cannot honour in the report', () => {
    expect(result.report).toMatch(/^- auth_required ×\d+ .*Prism accepts any well-formed bearer token$/m);
    expect(result.report).toMatch(
      /^- invalid_input_rejected ×\d+ .*Prism ignores query parameters the spec does not list$/m,
    );
    expect(result.report).toMatch(
      /^- not_acceptable ×\d+ .*Prism answers an unacceptable Accept with its own 406 body/m,
    );
    expect(result.report).toMatch(/^- body_too_large ×\d+ .*Prism has no body size limit/m);
    // An over-long path is still held to a 4xx problem; only its time is not judged.
    expect(result.report).toMatch(/^- long_path ×\d+ .*Prism resolves a path in time that grows with its length/m);
    expect(result.results.ofCheck('long_path')).toMatchObject({ fail: 0 });
    expect(result.results.ofCheck('long_path').pass).toBeGreaterThan(0);
    expect(result.report).toMatch(/^stateful checks skipped: profile mock/m);
  });
});

describe('with the default profile', () => {
  // One run serves the first two tests: every check, so both the stateless detection and the mock profile it
  // switches to are seen in it.
  let result: ConformanceResult;

  beforeAll(async () => {
    result = await runConformance({ baseUrl: prism.url, apiKey: KEY, seed: 9, cases: 10 });
  }, 120_000);

  it('sees that the mock keeps no state and skips the stateful checks rather than failing or passing them', () => {
    expect(result.stateless).toMatch(/two different \w+ creates both answered id \d+/);
    expect(result.passed).toBe(true);
    expect(result.results.ofCheck('stateful_scenario')).toMatchObject({ pass: 0, fail: 0 });
    expect(result.results.ofCheck('created_readable').skip).toBeGreaterThan(0);
    expect(result.results.ofCheck('valid_input_accepted').pass).toBeGreaterThan(0);
  });

  it('then holds the mock to what a mock can honour, naming each skip', () => {
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
    expect(result.report).toMatch(/profile mock/);
    expect(result.results.ofCheck('auth_required')).toMatchObject({ fail: 0 });
    expect(result.results.ofCheck('auth_required').skip).toBeGreaterThan(0);
    expect(result.report).toMatch(/Prism accepts any well-formed bearer token/);
  });

  it('fails the mock under --profile server, where the stateful checks are not skipped', async () => {
    // The scenarios and the credential probes: what a mock cannot honour, held to the server's standard.
    const result = await runConformance({
      baseUrl: prism.url,
      apiKey: KEY,
      seed: 9,
      cases: 10,
      profile: 'server',
      only: ['stateful_scenario', 'auth_required'],
    });
    expect(result.passed).toBe(false);
    expect(result.results.ofCheck('stateful_scenario').fail).toBeGreaterThan(0);
    expect(result.results.ofCheck('auth_required').fail).toBeGreaterThan(0);
  }, 60_000);
});
