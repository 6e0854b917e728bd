// /docs in a real browser: Debian's Chromium, driven by playwright-core, against the running service and the
// page `npm run docs` builds. Every operation of the spec renders, the store samples show the form body, and
// the page logs no errors and sends no request off its origin. Saves test-results/docs.png for CI.
// Without Chromium (a contributor's laptop) the tests are skipped with a message; under CI they fail instead.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs } from '../../scripts/docs.js';
import { startServer, type TestServer } from '../support/server.js';
import { operations, type SpecOperation } from '../support/spec-operations.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = new URL('../../', import.meta.url).pathname;
const SCREENSHOT = join(ROOT, 'test-results', 'docs.png');

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && !process.env.CI) {
  console.warn(`docs-page.test.ts: skipped, no Chromium at ${CHROMIUM} (install Debian's chromium to run it).`);
}

describe.skipIf(!hasChromium && !process.env.CI)('/docs in Chromium', () => {
  let dir: string | undefined;
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  /** Opens the page at an operation (Redoc routes by hash: #/<tag>/<operationId>) and returns its section. */
  async function openOperation({ tag, operationId }: SpecOperation) {
    await page.goto(`${server.origin}/docs#/${tag.toLowerCase()}/${operationId}`);
    const section = page.locator(`[id="${tag.toLowerCase()}/${operationId}"]`);
    await section.locator('h2').first().waitFor({ state: 'visible' });
    return section;
  }

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI needs Chromium at ${CHROMIUM}: apt-get install chromium`);
    // The same build as `npm run docs`, into a folder of this test: the working tree's .docs/ is left alone.
    // Made here, not when the suite is collected: a skipped suite is collected too, and runs no afterAll.
    dir = mkdtempSync(join(tmpdir(), 'dss-docs-page-'));
    const docsFile = join(dir, 'index.html');
    buildDocs(docsFile);
    server = await startServer({ docsFile });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    // On the context, not the page: requests of workers and of any page the docs open count too.
    context.on('request', (request) => {
      requests.push(request.url());
    });
    page = await context.newPage();
    // Below vitest's own test timeout, so that a wait that fails says what it waited for.
    page.setDefaultTimeout(10_000);
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(`console: ${message.text()}`);
    });
    page.on('pageerror', (error) => {
      consoleErrors.push(`page error: ${error.message}`);
    });
    await page.goto(`${server.origin}/docs`, { waitUntil: 'networkidle' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('shows the guide of the spec description', async () => {
    const sidebar = await page.locator('.menu-content').innerText();
    for (const section of ['Getting started', 'Lists and pagination', 'Errors', 'Limits', 'Versioning']) {
      expect(sidebar).toContain(section);
    }
  });

  it('reads all twelve operations from the spec: six per resource', () => {
    expect(operations.map(({ operationId }) => operationId).sort()).toEqual(
      ['domains', 'spaces'].flatMap((resource) =>
        ['delete', 'list', 'patch', 'show', 'store', 'update'].map((verb) => `${resource}_${verb}`),
      ),
    );
  });

  it.each(operations)('shows $operationId ("$summary") with its curl sample', async (operation) => {
    const section = await openOperation(operation);
    expect(await section.locator('h2').first().innerText()).toBe(operation.summary);
    expect(await section.locator('pre').first().innerText()).toMatch(/^curl -s /);
  });

  it('shows the form body in the curl sample of a store operation, and the TypeScript sample next to it', async () => {
    const store = operations.find(({ operationId }) => operationId === 'domains_store');
    if (!store) throw new Error('domains_store is not in the spec');
    const section = await openOperation(store);
    const sample = section.locator('pre').first();
    expect(await sample.isVisible()).toBe(true);
    const curl = await sample.innerText();
    // The origin the page is served from, not the one the spec's samples are written for.
    expect(curl).toContain(`curl -s ${server.origin}/api/v1/domains`);
    expect(curl).toContain("--data-urlencode 'name=shop.example.com'");
    expect(curl).toContain("--data-urlencode 'index_page=https://shop.example.com/welcome.html'");

    await section.getByRole('button', { name: 'curl', exact: true }).click();
    await page.getByRole('menuitem', { name: 'TypeScript', exact: true }).click();
    await expect.poll(() => sample.innerText()).toContain("from 'domain-space-client'");
    expect(await sample.innerText()).toContain("name: 'shop.example.com'");

    // Back to curl (the language choice is remembered) for the screenshot CI keeps.
    await section.getByRole('button', { name: 'TypeScript', exact: true }).click();
    await page.getByRole('menuitem', { name: 'curl', exact: true }).click();
    await expect.poll(() => sample.innerText()).toContain('--data-urlencode');
    // A tall viewport rather than fullPage: Redoc renders operations lazily around a sticky sidebar, so a
    // full-page capture is mostly blank; this shows the sidebar, the operation, its sample and responses.
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    await page.setViewportSize({ width: 1440, height: 1600 });
    await section.locator('h2').first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: SCREENSHOT });
  });

  it('logs no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });

  it("sends no request to an origin other than the service's own", () => {
    expect(requests).toContain(`${server.origin}/docs`);
    const offOrigin = requests.filter((url) => {
      const { protocol, origin } = new URL(url);
      return protocol !== 'data:' && protocol !== 'blob:' && origin !== server.origin;
    });
    expect(offOrigin).toEqual([]);
  });
});
