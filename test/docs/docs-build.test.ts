// The docs build's own guards, without running Redocly: what it strips or refuses so that the page never
// leaves its origin, and how npm start's docs build tells a stale page from a fresh one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docsAreFresh, docsSourceHash, keepOnOrigin } from '../../scripts/docs.js';

const LOGO = 'https://cdn.redoc.ly/redoc/logo-mini-full.svg';
const LOGO_MINI = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
/** The parts of a Redoc page the guards look at: the badge's logo URLs and the telemetry option. */
const page = (extra = '', options = '{"disableTelemetry":true}') =>
  `<html><head>${extra}</head><body><script type="module">const logos = [\`${LOGO}\`, \`${LOGO_MINI}\`];
  const __redoc_options = ${options};</script></body></html>`;

describe('keepOnOrigin', () => {
  it('inlines the logos Redoc would load from its CDN', () => {
    const kept = keepOnOrigin(page());
    expect(kept).not.toContain('cdn.redoc.ly');
    expect(kept.match(/data:image\/svg\+xml,/g)).toHaveLength(2);
  });

  it.each([
    ['a script from another origin', '<script src="https://cdn.example/redoc.js"></script>'],
    ['a protocol-relative image', '<img src="//cdn.example/logo.png">'],
    ['a web font stylesheet', '<link rel="stylesheet" href="https://fonts.googleapis.com/css?family=Roboto">'],
    ['a preload from a CDN', '<link rel="modulepreload" href="https://cdn.redocly.com/redoc/v3/redoc.js">'],
    ['a stylesheet import', '<style>@import url("https://fonts.googleapis.com/css2?family=Inter");</style>'],
  ])('refuses a page with %s', (_what, extra) => {
    expect(() => keepOnOrigin(page(extra))).toThrow(/off its origin/);
  });

  it('refuses a page with Redoc telemetry on', () => {
    expect(() => keepOnOrigin(page('', '{"disableTelemetry":false}'))).toThrow(/telemetry/);
  });

  it('fails when Redoc no longer references the logos it replaces (a changed Redoc needs a look)', () => {
    expect(() => keepOnOrigin('<html><body>no badge</body></html>')).toThrow(/expected Redoc to reference/);
  });
});

describe('docsAreFresh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dss-docs-fresh-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const built = (hash: string) => `<!DOCTYPE html><html><head><meta name="dss-docs-source" content="${hash}" />`;

  it.each([
    ['fresh', 'built from the current spec, config, template and Redocly', () => built(docsSourceHash()), true],
    ['stale', 'built from other inputs', () => built('0'.repeat(64)), false],
    ['stale', 'without a source hash', () => '<!DOCTYPE html><html><head><title>old</title>', false],
  ])('a page is %s when %s', (_state, _when, html, fresh) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.html`);
    writeFileSync(file, html());
    expect(docsAreFresh(file)).toBe(fresh);
  });

  it('a page that does not exist is stale', () => {
    expect(docsAreFresh(join(dir, 'missing.html'))).toBe(false);
  });
});
