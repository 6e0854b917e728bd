// The built client in a real browser (Debian's Chromium through playwright-core): ES modules loaded by the page
// from the API's own origin and from another origin (CORS), talking to the real server.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type Browser, chromium, type Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';

const chromiumPath = '/usr/bin/chromium';
const available = existsSync(chromiumPath);
const root = fileURLToPath(new URL('../..', import.meta.url));

if (!available && !process.env.CI) {
  console.warn(`browser tests skipped: no Chromium at ${chromiumPath} (apt-get install chromium); CI fails instead`);
}

/** What the page script reports back. */
interface PageReport {
  created: { id: number; name: string };
  listedNames: string[];
  updatedIndexPage: string | null;
  listAllCount: number;
  error: { isApiError: boolean; status: number; requestId: string | undefined; hasHeaderId: boolean };
  afterDelete: number;
}

describe.skipIf(!available && !process.env.CI)('in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let built: string;
  let key: string;

  beforeAll(async () => {
    if (!available)
      throw new Error(`no Chromium at ${chromiumPath}: CI runs the browser tests (apt-get install chromium)`);
    // Its own build, so that the pack test's build of client/dist cannot race with this one.
    built = mkdtempSync(join(tmpdir(), 'dss-client-browser-'));
    await promisify(execFile)(
      join(root, 'node_modules/.bin/tsc'),
      ['-p', join(root, 'client/tsconfig.build.json'), '--outDir', built],
      { timeout: 120_000 },
    );
    server = await startServer();
    key = (await server.account('browser')).key;
    browser = await chromium.launch({
      executablePath: chromiumPath,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (built) rmSync(built, { recursive: true, force: true });
  });

  /** A page at pageOrigin that can import the client (/client/…) and openapi-fetch (through an import map),
   * both served by page.route from the test's build and node_modules. */
  async function openPage(pageOrigin: string): Promise<{ page: Page; errors: string[] }> {
    // The harness document is the service's /healthz, whose own CSP (default-src 'none') would refuse the
    // test's import map; the API calls the page makes are still held to CORS as any page's are.
    const page = await browser.newPage({ bypassCSP: true });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    await page.route(`${pageOrigin}/vendor/openapi-fetch.js`, (route) =>
      route.fulfill({ path: join(root, 'node_modules/openapi-fetch/dist/index.mjs'), contentType: 'text/javascript' }),
    );
    await page.route(`${pageOrigin}/client/**`, (route) => {
      const file = normalize(join(built, new URL(route.request().url()).pathname.slice('/client/'.length)));
      if (!file.startsWith(built) || !existsSync(file)) return route.fulfill({ status: 404 });
      return route.fulfill({ body: readFileSync(file, 'utf8'), contentType: 'text/javascript' });
    });
    // A real document of the server (not a routed one), so Chromium places the page on the loopback address
    // space like the API; its local-network rules would refuse a page of unknown origin.
    await page.goto(`${pageOrigin}/healthz`);
    await page.addScriptTag({ type: 'importmap', content: '{"imports":{"openapi-fetch":"/vendor/openapi-fetch.js"}}' });
    return { page, errors };
  }

  /** Runs create, list, update, listAll, a failing get and delete through the client inside the page. */
  function exercise(page: Page, baseUrl: string, name: string): Promise<PageReport> {
    // A string, not a function: vitest would rewrite the import() of a function it compiled.
    return page.evaluate(`(async ({ baseUrl, apiKey, name }) => {
      const client = await import('/client/client/src/index.js');
      const api = client.createClient({ baseUrl, apiKey });
      const created = await api.domains.create({ name, index_page: 'https://browser.example/' });
      const listed = await api.domains.list({ search: name });
      const updated = await api.domains.update(created.id, { index_page: null });
      let listAllCount = 0;
      for await (const domain of api.domains.listAll({ per_page: 10 })) listAllCount++;
      const error = await api.domains.get(987654).catch((e) => e);
      await api.domains.delete(created.id);
      const afterDelete = (await api.domains.list({ search: name })).meta.total;
      return {
        created: { id: created.id, name: created.name },
        listedNames: listed.data.map((d) => d.name),
        updatedIndexPage: updated.index_page,
        listAllCount,
        error: {
          isApiError: error instanceof client.ApiError,
          status: error.status,
          requestId: error.requestId,
          hasHeaderId: error.headers.get('X-Request-Id') === error.requestId,
        },
        afterDelete,
      };
    })(${JSON.stringify({ baseUrl, apiKey: key, name })})`);
  }

  test.each([
    ['from the API origin, with a relative baseUrl', 'same', 'same-origin.browser.example'],
    ['from another origin, through CORS', 'cross', 'cross-origin.browser.example'],
  ])('creates, lists, updates and deletes %s', async (_, where, name) => {
    // localhost is another origin than 127.0.0.1 yet as local, so Chromium's local-network rules stay out of it.
    const pageOrigin = where === 'same' ? server.origin : server.origin.replace('127.0.0.1', 'localhost');
    const { page, errors } = await openPage(pageOrigin);
    try {
      const report = await exercise(page, where === 'same' ? '/api/v1' : server.apiUrl, name).catch((e: Error) => {
        throw new Error(`${e.message}\nbrowser console:\n${errors.join('\n')}`);
      });
      expect(report.created.name).toBe(name);
      expect(report.listedNames).toEqual([name]);
      expect(report.updatedIndexPage).toBeNull();
      expect(report.listAllCount).toBeGreaterThanOrEqual(1);
      // A 404 is an ApiError in the page too, and the X-Request-Id header is readable (exposed under CORS).
      expect(report.error).toMatchObject({ isApiError: true, status: 404, hasHeaderId: true });
      expect(report.error.requestId).toBeTruthy();
      expect(report.afterDelete).toBe(0);
      // The 404 is logged by the browser as a failed resource load; nothing else may go wrong.
      expect(errors.filter((e) => !/404/.test(e))).toEqual([]);
    } finally {
      await page.close();
    }
  });

  test('verifies a webhook delivery synchronously in the page, and throws at once on a forged one', async () => {
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    const id = 'evt_000000000000000000000001';
    const body = JSON.stringify({ id, type: 'webhook.test', note: 'ü ✓' });
    const at = new Date();
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, body),
    };
    const { page, errors } = await openPage(server.origin);
    try {
      const report = await page.evaluate(`(async ({ secret, body, headers }) => {
        const client = await import('/client/client/src/index.js');
        const verified = client.verifyWebhook(secret, body, headers);
        let forged = 'accepted';
        try {
          client.verifyWebhook(secret, body, { ...headers, 'webhook-signature': 'v1,' + 'A'.repeat(43) + '=' });
        } catch (error) {
          forged = error instanceof client.WebhookVerificationError ? 'threw' : String(error);
        }
        return { isPromise: verified instanceof Promise, id: verified.id, forged };
      })(${JSON.stringify({ secret, body, headers })})`);
      expect(report).toEqual({ isPromise: false, id, forged: 'threw' });
      expect(errors).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
