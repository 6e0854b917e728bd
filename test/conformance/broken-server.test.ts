// The runner can fail: against a proxy that plants one fault at a time, each fault is reported under the check
// that names it, with a curl line that reproduces it (the key shown as $API_KEY) and the response.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlOf } from '../../scripts/conformance/http.js';
import type { CheckName } from '../../scripts/conformance/results.js';
import { runConformance } from '../../scripts/conformance/run.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type BrokenServer, type Fault, startBrokenServer } from './broken-server.js';

let server: TestServer;
let broken: BrokenServer;
let first: TestAccount;
let second: TestAccount;

beforeAll(async () => {
  server = await startServer();
  first = await server.account('broken-first');
  second = await server.account('broken-second');
  broken = await startBrokenServer(server.origin, first.key);
});
afterAll(async () => {
  await broken.close();
  await server.close();
});

const run = (fault: Fault | undefined) => {
  broken.fault = fault;
  return runConformance({ baseUrl: broken.apiUrl, apiKey: first.key, secondApiKey: second.key, seed: 4242, cases: 25 });
};

const PLANTED: Array<{ fault: Fault; subject: string; check: CheckName; message: RegExp }> = [
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
  },
  {
    fault: 'delete-answers-200-with-body',
    subject: 'domains_delete',
    check: 'status_code_documented',
    message: /status 200 is not documented/,
  },
  {
    fault: 'server-error-on-non-ascii-space-name',
    subject: 'spaces_store',
    check: 'no_server_error',
    message: /status 500/,
  },
  {
    fault: 'show-ignores-account',
    subject: 'spaces_show',
    check: 'account_isolation',
    message: /answered 200, not 404/,
  },
  { fault: 'no-request-id', subject: 'domains_show', check: 'response_headers', message: /X-Request-Id missing/ },
  {
    fault: 'wrong-content-type',
    subject: 'spaces_show',
    check: 'content_type_documented',
    message: /came as "text\/html"/,
  },
  {
    fault: 'method-not-allowed-without-allow',
    subject: '/domains',
    check: 'method_not_allowed',
    message: /405 without an Allow header/,
  },
];

describe('the broken server', () => {
  it('passes every check with no fault planted (the proxy itself is faithful)', async () => {
    const result = await run(undefined);
    expect(result.results.failures.size === 0 ? '' : result.report).toBe('');
    expect(result.passed).toBe(true);
  }, 60_000);

  it.each(PLANTED)(
    'reports $fault under $check',
    async ({ fault, subject, check, message }) => {
      const result = await run(fault);
      expect(result.passed).toBe(false);
      const found = [...result.results.failures.values()].find(
        (f) => f.subject === subject && f.check === check && message.test(f.message),
      );
      expect(found, result.report).toBeDefined();
      const curl = curlOf(found?.exchange?.request ?? { method: '', url: '', headers: {} }, result.secrets);
      expect(curl).toMatch(/^curl -i -X [A-Z]+ 'http:\/\/127\.0\.0\.1:\d+\/api\/v1\//);
      expect(result.report).toContain(curl);
      expect(result.report).not.toContain(first.key);
      expect(result.report).toContain(`✗ ${subject} · ${check}`);
    },
    60_000,
  );
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
        '5',
      ],
      { cwd: new URL('../..', import.meta.url).pathname, stdio: ['ignore', 'pipe', 'ignore'] },
    );
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(stdout).toMatch(/^✗ domains_show · response_schema/m);
    expect(stdout).toContain('-H "Authorization: Bearer $API_KEY"');
    expect(stdout).not.toContain(first.key);
    expect(stdout).toMatch(/^FAILED: /m);
  }, 60_000);
});
