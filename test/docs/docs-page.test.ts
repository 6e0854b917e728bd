// /docs in a real browser: Debian's Chromium, driven by playwright-core, against the running service and the
// page `npm run docs` builds. The guide and every operation of the spec render, the console sends a create to
// this service with the key typed into it (and a fresh Idempotency-Key each time), the samples show this origin,
// and the page logs no errors (a CSP violation is one) and sends no request off its origin. What the console
// shows is what it sends (no optional value shown unticked, no made-up id or cursor), the sidebar lists each
// operation once, every response status is in view, and nothing is drawn over a label or a sample's line numbers.
// Saves screenshots at 1280 and 390 px to test-results/. Without Chromium (a contributor's laptop) the tests are
// skipped with a message; under CI they fail instead.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocs } from '../../scripts/docs.js';
import { spec } from '../support/contract.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { operations, type SpecOperation } from '../support/spec-operations.js';
import { coveredTabs, linesUnderTheirNumbers, overlappingControls, shownButNotSent } from './page-checks.js';

const CHROMIUM = '/usr/bin/chromium';
const ROOT = new URL('../../', import.meta.url).pathname;
const RESULTS = join(ROOT, 'test-results');

const hasChromium = existsSync(CHROMIUM);
if (!hasChromium && !process.env.CI) {
  console.warn(`docs-page.test.ts: skipped, no Chromium at ${CHROMIUM} (install Debian's chromium to run it).`);
}

/** Scalar's route to an operation: #tag/<tag>/<METHOD><path>. */
const routeOf = ({ tag, method, template }: SpecOperation) => `#tag/${tag.toLowerCase()}/${method}${template}`;

describe.skipIf(!hasChromium && !process.env.CI)('/docs in Chromium', () => {
  let dir: string | undefined;
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  const apiRequests: Array<{ method: string; url: string; headers: Record<string, string>; body: string | null }> = [];
  let server: TestServer;
  let account: TestAccount;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  /** Opens the page at an operation and returns its section once its heading shows. */
  async function openOperation(operation: SpecOperation) {
    // A console left open by a failed test would cover the page for the next one.
    if (await page.getByRole('dialog').isVisible()) await page.keyboard.press('Escape');
    await page.goto(`${server.origin}/docs${routeOf(operation)}`);
    const section = page.locator(`section[id$="${routeOf(operation).slice(1)}"]`);
    await section.getByRole('heading', { name: operation.summary, exact: true }).waitFor({ state: 'visible' });
    return section;
  }

  /** Opens the console of an operation with the account's key typed in. */
  async function openConsole(operation: SpecOperation): Promise<Locator> {
    const section = await openOperation(operation);
    await section.getByRole('button', { name: /Test Request/ }).click();
    const dialog = page.getByRole('dialog');
    const token = dialog.getByPlaceholder('Token');
    if ((await token.inputValue()) === '') await token.fill(account.key);
    return dialog;
  }

  const operationNamed = (operationId: string) => {
    const found = operations.find((operation) => operation.operationId === operationId);
    if (!found) throw new Error(`${operationId} is not in the spec`);
    return found;
  };

  beforeAll(async () => {
    if (!hasChromium) throw new Error(`CI needs Chromium at ${CHROMIUM}: apt-get install chromium`);
    // The same build as `npm run docs`, into a folder of this test: the working tree's .docs/ is left alone.
    // Made here, not when the suite is collected: a skipped suite is collected too, and runs no afterAll.
    dir = mkdtempSync(join(tmpdir(), 'dss-docs-page-'));
    const docsFile = join(dir, 'index.html');
    buildDocs(docsFile);
    server = await startServer({ docsFile });
    account = await server.account('docs-console');
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
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // On the context, not the page: requests of workers and of any page the docs open count too.
    context.on('request', (request) => {
      requests.push(request.url());
      if (new URL(request.url()).pathname.startsWith('/api/')) {
        apiRequests.push({
          method: request.method(),
          url: request.url(),
          headers: request.headers(),
          body: request.postData(),
        });
      }
    });
    page = await context.newPage();
    // Below the tests' own timeout, so that a wait that fails says what it waited for. The page is megabytes of
    // script: on a loaded machine a navigation takes seconds.
    page.setDefaultTimeout(30_000);
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

  it('shows the guide of the spec description, and this deployment as the server', async () => {
    for (const section of [
      'Getting started',
      'Lists and pagination',
      'Errors',
      'Limits',
      'Versioning and deprecation',
    ]) {
      await page.getByRole('heading', { name: section, exact: true }).first().waitFor({ state: 'attached' });
    }
    const intro = await page.locator('.introduction-description').first().innerText();
    expect(intro).toContain(`curl -s ${server.origin}/api/v1/domains`);
    expect(intro).not.toContain('http://127.0.0.1:3000');
    expect(await page.getByText(`${server.origin}/api/v1`, { exact: true }).count()).toBeGreaterThan(0);
    expect(await page.getByText('domain-space-service.dev').count()).toBe(0);
  }, 60_000);

  it("reads the domains' and spaces' operations from the spec: six per resource, and a domain's verify", () => {
    expect(operations.map(({ operationId }) => operationId).sort()).toEqual(
      [
        ...['domains', 'spaces'].flatMap((resource) =>
          ['delete', 'list', 'patch', 'show', 'store', 'update'].map((verb) => `${resource}_${verb}`),
        ),
        'domains_verify',
      ].sort(),
    );
  });

  it.each(operations)(
    'shows $operationId ("$summary") with a curl sample for this origin',
    async (operation) => {
      const section = await openOperation(operation);
      const sample = section.locator('.scalar-code-block code').first();
      await expect.poll(() => sample.innerText()).toMatch(/^curl /);
      const curl = await sample.innerText();
      expect(curl).toContain(`${server.origin}/api/v1/${operation.resource}`);
      if (operation.method !== 'GET') expect(curl).toContain(`--request ${operation.method}`);
    },
    60_000,
  );

  it('sends a create from the console to this service: 201, the key typed in, a fresh Idempotency-Key each time', async () => {
    const dialog = await openConsole(operationNamed('spaces_store'));
    // A value shown unticked would not be sent: a space "created with colour 3" would get colour 1.
    expect(await shownButNotSent(dialog)).toEqual([]);
    const sent = apiRequests.length;
    for (let attempt = 0; attempt < 2; attempt++) {
      const [response] = await Promise.all([
        page.waitForResponse((answer) => answer.url() === `${server.apiUrl}/spaces`),
        dialog.getByRole('button', { name: /^Send/ }).first().click(),
      ]);
      expect(response.status()).toBe(201);
    }
    const creates = apiRequests.slice(sent).filter((request) => request.method === 'POST');
    expect(creates).toHaveLength(2);
    for (const create of creates) {
      expect(create.headers.authorization).toBe(`Bearer ${account.key}`);
      expect(create.headers['idempotency-key']).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      );
      // Only the required field: an optional one left blank is not sent.
      expect(create.body).toBe('name=Marketing');
    }
    expect(creates[0]?.headers['idempotency-key']).not.toBe(creates[1]?.headers['idempotency-key']);
    await expect.poll(() => dialog.innerText()).toContain('"name": "Marketing"');
    const { data } = await account.client.GET('/spaces', { params: { query: { search: 'Marketing' } } });
    expect(data?.meta.total).toBe(2);

    // An optional field typed into the form's empty row is ticked by the typing, and sent.
    const keys = dialog.locator('[contenteditable][aria-label$="Key"]');
    await keys.last().click();
    await page.keyboard.type('color');
    const colorRow = dialog.locator('tr').filter({
      has: page.locator('[contenteditable][aria-label$="Key"]', { hasText: /^color$/ }),
    });
    await colorRow.last().locator('[contenteditable][aria-label$="Value"]').click();
    await page.keyboard.type('4');
    expect(await shownButNotSent(dialog)).toEqual([]);
    const [coloured] = await Promise.all([
      page.waitForResponse((answer) => answer.url() === `${server.apiUrl}/spaces`),
      dialog.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(coloured.status()).toBe(201);
    expect(apiRequests.at(-1)?.body).toBe('name=Marketing&color=4');
    expect(((await coloured.json()) as { data: { color: number } }).data.color).toBe(4);
    await expect.poll(() => dialog.innerText()).toContain('"color": 4');
    mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({ path: join(RESULTS, 'docs-console-1280.png') });
    await page.keyboard.press('Escape');
  }, 90_000);

  it('sends the list and a show as the console shows them: no made-up cursor, page or id', async () => {
    const list = await openConsole(operationNamed('spaces_list'));
    expect(await shownButNotSent(list)).toEqual([]);
    const [listed] = await Promise.all([
      page.waitForResponse((answer) => new URL(answer.url()).pathname === '/api/v1/spaces'),
      list.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    // The spec's examples once filled in both `page` and a cursor: a 422 for the first request a reader sent.
    expect(listed.status()).toBe(200);
    // Closed before the console has read the whole answer, the console cancels its request and logs an error.
    await expect.poll(() => list.innerText()).toContain('"per_page"');
    await page.keyboard.press('Escape');

    const { data } = await account.client.POST('/spaces', { body: { name: 'Shown by id' } });
    const id = data?.data.id;
    if (id === undefined) throw new Error('the space was not created');
    const show = await openConsole(operationNamed('spaces_show'));
    const idValue = show.locator('tr[id="id"] [contenteditable][aria-label$="Value"]');
    expect(await idValue.innerText()).toBe('');
    await idValue.click();
    await page.keyboard.type(String(id));
    const [shown] = await Promise.all([
      page.waitForResponse((answer) => answer.url() === `${server.apiUrl}/spaces/${id}`),
      show.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(shown.status()).toBe(200);
    await expect.poll(() => show.innerText()).toContain('"name": "Shown by id"');
    await page.keyboard.press('Escape');
  }, 90_000);

  it('lists each operation once in the sidebar (HEAD works wherever GET does, and is not listed)', async () => {
    const list = operationNamed('spaces_list');
    await openOperation(list);
    const sidebarEntry = page.getByText(list.summary, { exact: true });
    await expect.poll(() => sidebarEntry.count()).toBeGreaterThan(1);
    expect(await page.getByText(/headers only \(HEAD\)/).count()).toBe(0);
  }, 60_000);

  it("shows a tab for every status of an operation's responses, none covered by the card's buttons", async () => {
    const store = operationNamed('spaces_store');
    const section = await openOperation(store);
    const card = section.locator('.response-card').first();
    await card.scrollIntoViewIfNeeded();
    const documented = spec.model.operations.find((operation) => operation.id === store.operationId);
    const { responses } = (documented?.object ?? {}) as { responses?: Record<string, unknown> };
    const statuses = Object.keys(responses ?? {});
    expect(statuses.length).toBeGreaterThan(8);
    const tabs = (await card.getByRole('tab').allInnerTexts()).map((text) => text.replace(/status:/i, '').trim());
    expect(tabs).toEqual(statuses);
    expect(await coveredTabs(card)).toEqual([]);
  }, 60_000);

  it('opens a problem type at its row of the guide (/problems/<kind> leads there)', async () => {
    await page.goto(`${server.origin}/problems/validation`, { waitUntil: 'commit' });
    await expect.poll(() => page.url()).toBe(`${server.origin}/docs#problem-validation`);
    const anchor = page.locator('[id="problem-validation"]');
    await anchor.waitFor({ state: 'attached' });
    // Scrolled into the window (its top may sit right at the window's top).
    await expect.poll(async () => (await anchor.boundingBox())?.y ?? -100).toBeGreaterThan(-10);
    await expect.poll(async () => (await anchor.boundingBox())?.y ?? 10_000).toBeLessThan(900);
  }, 60_000);

  it.each([1280, 390])(
    'fits a %i px wide window: the title wraps between words, samples wrap',
    async (width) => {
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${server.origin}/docs`, { waitUntil: 'networkidle' });
      const title = page.getByRole('heading', { level: 1 }).first();
      await title.waitFor({ state: 'visible' });
      const wordsFit = await title.evaluate((heading) => {
        // Each word of the title lies on one line: its box is one line high.
        const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
        const range = document.createRange();
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (const word of (node.textContent ?? '').matchAll(/\S+/g)) {
            range.setStart(node, word.index);
            range.setEnd(node, word.index + word[0].length);
            if (range.getClientRects().length !== 1) return false;
          }
        }
        return true;
      });
      expect(wordsFit).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      mkdirSync(RESULTS, { recursive: true });
      await page.screenshot({ path: join(RESULTS, `docs-${width}.png`) });
      const store = operations.find(({ operationId }) => operationId === 'domains_store');
      if (!store) throw new Error('domains_store is not in the spec');
      const section = await openOperation(store);
      const block = section.locator('.scalar-code-block').first();
      // No line of the sample runs past its card: nothing is hidden behind the edge or the copy button.
      expect(await block.evaluate((element) => element.scrollWidth <= element.clientWidth + 1)).toBe(true);
      // A wrapped line goes on beside its number, not under it.
      expect(await linesUnderTheirNumbers(block)).toEqual([]);
      await page.screenshot({ path: join(RESULTS, `docs-store-${width}.png`) });
      await section.getByRole('button', { name: /Test Request/ }).click();
      await page.getByRole('dialog').getByRole('button', { name: /^Send/ }).first().waitFor({ state: 'visible' });
      expect(await overlappingControls(page)).toEqual([]);
      await page.screenshot({ path: join(RESULTS, `docs-console-store-${width}.png`) });
      await page.keyboard.press('Escape');
      await page.setViewportSize({ width: 1280, height: 900 });
    },
    90_000,
  );

  it('logs no console errors (a Content-Security-Policy violation would be one)', () => {
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
