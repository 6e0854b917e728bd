// The runner can fail: against a proxy that plants one fault at a time, each fault is reported under the check
// that names it, with a curl line that reproduces it (the key shown as $DSS_API_KEY) and the response.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlOf } from '../../scripts/conformance/http.js';
import { PreflightError } from '../../scripts/conformance/preflight.js';
import type { CheckName } from '../../scripts/conformance/results.js';
import { runConformance } from '../../scripts/conformance/run.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type BrokenServer, type Fault, startBrokenServer } from './broken-server.js';

let server: TestServer;
let broken: BrokenServer;
let first: TestAccount;
let second: TestAccount;

beforeAll(async () => {
  // With its delivery worker: the webhook checks' deliveries come from the server itself, past the proxy.
  server = await startServer({ deliver: true });
  first = await server.account('broken-first');
  second = await server.account('broken-second');
  broken = await startBrokenServer(server.origin, first.key);
});
afterAll(async () => {
  await broken.close();
  await server.close();
});

/**
 * A run against the proxy with `fault` planted: every check, or only the ones asked for. A planted fault shows
 * on the first request of its kind, so a few generated cases per operation find it; only a fault that needs a
 * certain generated value (a non-ASCII name) asks for more.
 */
const run = (fault: Fault | undefined, only?: CheckName[], cases = 3) => {
  broken.fault = fault;
  return runConformance({
    baseUrl: broken.apiUrl,
    apiKey: first.key,
    secondApiKey: second.key,
    seed: 4242,
    cases,
    ...(only ? { only } : {}),
  });
};

const PLANTED: Array<{
  fault: Fault;
  subject: string;
  check: CheckName;
  message: RegExp;
  detail?: RegExp;
  cases?: number;
  /**
   * For a check made on every answer: the check of the phase whose requests reach the subject, asked for beside
   * it. Asked for alone, such a check runs every phase (the first fault below, which has none, shows that path).
   */
  phase?: CheckName;
}> = [
  { fault: 'head-answers-405', subject: 'spaces_list', check: 'head_like_get', message: /HEAD answered 405, GET 200/ },
  {
    fault: 'undocumented-field-in-show',
    subject: 'domains_show',
    check: 'response_schema',
    message: /must NOT have additional properties \(internal_note\)/,
  },
  {
    fault: 'store-answers-200',
    subject: 'spaces_store',
    check: 'status_code_documented',
    message: /status 200 is not documented/,
    phase: 'valid_input_accepted',
  },
  {
    fault: 'delete-answers-200-with-body',
    subject: 'domains_delete',
    check: 'status_code_documented',
    message: /status 200 is not documented/,
    phase: 'valid_input_accepted',
  },
  {
    fault: 'server-error-on-non-ascii-space-name',
    subject: 'spaces_store',
    check: 'no_server_error',
    message: /status 500/,
    phase: 'valid_input_accepted',
    cases: 25,
  },
  {
    fault: 'show-ignores-account',
    subject: 'spaces_show',
    check: 'account_isolation',
    message: /answered 200, not 404/,
  },
  {
    fault: 'no-request-id',
    subject: 'domains_show',
    check: 'response_headers',
    message: /X-Request-Id missing/,
    phase: 'valid_input_accepted',
  },
  {
    fault: 'wrong-content-type',
    subject: 'spaces_show',
    check: 'content_type_documented',
    message: /came as "text\/html"/,
    phase: 'valid_input_accepted',
  },
  {
    fault: 'method-not-allowed-without-allow',
    subject: '/domains',
    check: 'method_not_allowed',
    message: /405 without an Allow header/,
  },
  {
    fault: 'server-error-on-unknown-id',
    subject: 'domains_show',
    check: 'unknown_id_not_found',
    message: /^an id the account does not own answered 500, not the documented 404$/,
  },
  {
    fault: 'server-error-on-unknown-id',
    subject: 'spaces_delete',
    check: 'deleted_gone',
    message: /reading a deleted record answered 500/,
  },
  {
    fault: 'accept-ignored',
    subject: 'spaces_list',
    check: 'not_acceptable',
    message: /^accepted \(200\) a request with unacceptable_accept$/,
  },
  {
    fault: 'body-limit-ignored',
    subject: 'domains_patch',
    check: 'body_too_large',
    message: /^accepted \(200\) a request with oversized_body$/,
  },
  {
    fault: 'duplicate-name-server-error',
    subject: 'domains_store',
    check: 'duplicate_conflict',
    message: /^a create repeating the unique name of an earlier one answered 500, not the documented 409$/,
  },
  {
    fault: 'show-reports-another-updated-at',
    subject: 'spaces_store',
    check: 'created_readable',
    message: /^reading the created record answered other values than the create did, in data\.updated_at$/,
    detail: /^data\.updated_at: expected "20\d\d-[^"]+", got "2000-01-01T00:00:00\.000Z"$/m,
  },
  {
    fault: 'show-reports-another-updated-at',
    subject: 'domains',
    check: 'stateful_scenario',
    message: /^show after create: other values than the create answered, in data\.updated_at$/,
    detail: /^data\.updated_at: expected "20\d\d-[^"]+", got "2000-01-01T00:00:00\.000Z"$/m,
  },
  {
    fault: 'store-keeps-its-own-space-name',
    subject: 'spaces_store',
    check: 'created_readable',
    message: /^reading the created record answered other values than the create sent, in name$/,
    detail: /^name: expected ".*", got "Planted example"$/m,
  },
  {
    fault: 'idempotency-key-ignored',
    subject: 'spaces_store',
    check: 'idempotent_replay',
    message: /^the same key and payload created a second record$/,
  },
  {
    fault: 'idempotency-key-ignored',
    subject: 'domains_store',
    check: 'idempotency_key_reuse',
    message: /^the same key with another payload answered 201, not 422 \(a record was created\)$/,
  },
  {
    fault: 'repeated-headers-joined',
    subject: 'spaces_store',
    check: 'duplicate_idempotency_key',
    message: /^two Idempotency-Key headers answered 201, not 400$/,
  },
  {
    fault: 'problem-accept-refused',
    subject: 'domains_delete',
    check: 'problem_accept',
    message: /^Accept: application\/problem\+json answered 406$/,
  },
  {
    fault: 'conditional-headers-ignored',
    subject: 'domains_show',
    check: 'not_modified',
    message: /^If-None-Match with the ETag just received answered 200, not 304$/,
  },
  {
    fault: 'event-log-refuses-its-cursors',
    subject: 'events_list',
    check: 'list_walk',
    message: /^following links\.next \(page 2\) answered 422: /,
  },
  {
    fault: 'conditional-headers-ignored',
    subject: 'spaces_patch',
    check: 'precondition_failed',
    message: /^an update with a stale ETag in If-Match answered 200, not 412$/,
  },
];

describe('the broken server', () => {
  it('passes every check with no fault planted (the proxy itself is faithful)', async () => {
    const result = await run(undefined, undefined, 25);
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
    // A whole run, the webhook checks' retry (5 s by the standard schedule) included: 30 s alone, twice that
    // beside the other conformance suites.
  }, 180_000);

  it.each(PLANTED)(
    'reports $fault under $check ($subject)',
    async ({ fault, subject, check, message, detail, cases, phase }) => {
      // Only the phases of that check (for a check made on every answer, the phase given, or all of them): the
      // clean run above shows that nothing else fails.
      const result = await run(fault, phase ? [check, phase] : [check], cases);
      expect(result.passed).toBe(false);
      const found = [...result.results.failures.values()].find(
        (f) => f.subject === subject && f.check === check && message.test(f.message),
      );
      expect(found, result.report).toBeDefined();
      if (detail) {
        expect(found?.detail).toMatch(detail);
        expect(result.report).toContain(found?.detail?.split('\n')[0]);
      }
      const curl = curlOf(found?.exchange?.request ?? { method: '', url: '', headers: {} }, result.secrets);
      expect(curl).toMatch(/^curl -i -X [A-Z]+ 'http:\/\/127\.0\.0\.1:\d+\/api\/v1\//);
      expect(result.report).toContain(curl);
      expect(result.report).not.toContain(first.key);
      expect(result.report).toContain(`✗ ${subject} · ${check}`);
    },
    60_000,
  );
});

describe('a target that does not answer', () => {
  it('is stopped by the preflight before any check: no answer is never a pass', async () => {
    // A port that was just free: nothing listens there, so every request is refused.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as { port: number };
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const run = runConformance({ baseUrl: `http://127.0.0.1:${port}/api/v1`, apiKey: 'key', seed: 1, cases: 2 });
    await expect(run).rejects.toBeInstanceOf(PreflightError);
    await expect(run).rejects.toThrow(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1 \(/);
  }, 60_000);
});

describe('the command line against the broken server', () => {
  it('exits 1 and prints the failure with a curl line that hides the key', async () => {
    broken.fault = 'undocumented-field-in-show';
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'scripts/conformance/main.ts',
        '--base-url',
        broken.apiUrl,
        '--api-key',
        first.key,
        '--cases',
        '3',
        // The phase that reaches the planted field (the cases) and the check that reports it: the exit code and the
        // report's form are what this test is about, the runs above hold each check to its fault.
        '--only',
        'response_schema,valid_input_accepted',
      ],
      // Killed at the test's own limit, so a hung run never outlives the test.
      {
        cwd: new URL('../..', import.meta.url).pathname,
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 55_000,
        killSignal: 'SIGKILL',
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stdout).toMatch(/^✗ domains_show · response_schema/m);
    expect(stdout).toContain('-H "Authorization: Bearer $DSS_API_KEY"');
    expect(stdout).not.toContain(first.key);
    expect(stdout).toMatch(/^FAILED: /m);
  }, 60_000);
});
