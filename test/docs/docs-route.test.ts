// GET /docs serves the page `npm run docs` builds, without a key, under a CSP that keeps it on its origin, and
// answers a clear 503 problem while the page is not built; GET / points to it. A small stand-in page keeps these tests fast; the
// real page is checked in a browser by docs-page.test.ts.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { docsNotBuiltDetail } from '../../server/http/pages/docs.js';
import { startServer, type TestServer } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'dss-docs-'));
const builtPage = join(dir, 'index.html');
const START = "document.title = 'reference';";
const PAGE = `<!DOCTYPE html><html><head><title>API reference</title></head><body>reference<script type="application/json" id="dss-docs-config">{"sandboxKey":null}</script><script>${START}</script></body></html>`;

let built: TestServer;
let unbuilt: TestServer;
let sandbox: TestServer;

beforeAll(async () => {
  writeFileSync(builtPage, PAGE);
  [built, unbuilt, sandbox] = await Promise.all([
    startServer({ docsFile: builtPage }),
    startServer({ docsFile: join(dir, 'missing', 'index.html') }),
    startServer({ docsFile: builtPage, docsSandboxKey: 'dss_sandbox_console' }),
  ]);
});
afterAll(async () => {
  await Promise.all([built.close(), unbuilt.close(), sandbox.close()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The CSP directives of a response, by name. */
function directives(response: Response): Map<string, string[]> {
  const policy = response.headers.get('content-security-policy') ?? '';
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...sources]) => [name as string, sources]),
  );
}

describe('GET /docs', () => {
  it('serves the built page as UTF-8 HTML without a key', async () => {
    const response = await built.fetch('/docs');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    expect(await response.text()).toBe(PAGE);
  });

  it('sends the page gzipped to a client that accepts it, and plain to one that does not', async () => {
    const zipped = await built.fetch('/docs', { headers: { 'Accept-Encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toMatch(/Accept-Encoding/);
    expect(await zipped.text()).toBe(PAGE); // fetch unzips it
    const plain = await built.fetch('/docs', { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(PAGE);
  });

  it('answers 304 to a revalidation with the current ETag, and 200 with a stale one', async () => {
    const etag = (await built.fetch('/docs')).headers.get('etag');
    expect(etag).toMatch(/^"[\w-]+"$/);
    const fresh = await built.fetch('/docs', { headers: { 'If-None-Match': etag as string } });
    expect(fresh.status).toBe(304);
    expect(await fresh.text()).toBe('');
    const stale = await built.fetch('/docs', { headers: { 'If-None-Match': '"an-older-page"' } });
    expect(stale.status).toBe(200);
    expect(await stale.text()).toBe(PAGE);
  });

  it('ignores a bad Authorization header', async () => {
    const response = await built.fetch('/docs', { headers: { Authorization: 'Bearer not-a-key' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('www-authenticate')).toBeNull();
  });

  it("allows no source outside its own origin: the page's own scripts by hash, data: and blob:", async () => {
    const csp = directives(await built.fetch('/docs'));
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    // The one script that runs; the JSON data block is not a script.
    expect(csp.get('script-src')).toEqual([`'sha256-${createHash('sha256').update(START).digest('base64')}'`]);
    for (const [name, sources] of csp) {
      for (const source of sources) {
        expect(source, `${name} ${source}`).toMatch(
          /^('self'|'none'|'unsafe-inline'|'sha256-[A-Za-z0-9+/]+=*'|data:|blob:)$/,
        );
      }
    }
    expect(csp.get('script-src')?.join(' ')).not.toContain('unsafe');
  });

  it("fills in the sandbox's key for the console under npm run sandbox, and nothing otherwise", async () => {
    expect(await (await built.fetch('/docs')).text()).toContain('{"sandboxKey":null}');
    const page = await (await sandbox.fetch('/docs')).text();
    expect(page).toContain(
      '<script type="application/json" id="dss-docs-config">{"sandboxKey":"dss_sandbox_console"}</script>',
    );
  });

  it('shows a page rebuilt while the service runs', async () => {
    const rebuilt = PAGE.replace('reference', 'rebuilt reference');
    writeFileSync(builtPage, rebuilt);
    try {
      expect(await (await built.fetch('/docs')).text()).toBe(rebuilt);
    } finally {
      writeFileSync(builtPage, PAGE);
    }
  });

  it('answers 503 problem+json that says how to build the page when it is not built', async () => {
    const response = await unbuilt.fetch('/docs');
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await response.json();
    expect(problem).toMatchObject({
      type: '/problems/docs-not-built',
      title: 'Service Unavailable',
      status: 503,
      request_id: response.headers.get('x-request-id'),
    });
    expect(problem.detail).toContain('npm run docs');
  });

  it('says, where the page cannot be built (no development dependencies), how to get it there', () => {
    expect(docsNotBuiltDetail(true)).toContain('run `npm run docs`');
    expect(docsNotBuiltDetail(false)).toMatch(/npm ci --omit=dev\) left out\. Build the page where they are installed/);
  });
});

describe('GET /', () => {
  it('points to /docs: a redirect for browsers, a body that says where things are for the rest', async () => {
    const response = await built.fetch('/', { redirect: 'manual' });
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe('/docs');
    expect(await response.json()).toMatchObject({ docs: '/docs', api: '/api/v1' });
  });
});

describe('GET /docs/', () => {
  it('redirects permanently to /docs', async () => {
    const response = await built.fetch('/docs/', { redirect: 'manual' });
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/docs');
  });
});
