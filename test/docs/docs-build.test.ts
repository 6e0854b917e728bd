// The docs build without a browser: the page it renders keeps everything on its origin and carries its
// scripts and the spec so that no text in them can break out of their elements; and how npm start's docs build
// tells a stale page from a fresh one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  docsAreFresh,
  docsSourceHash,
  inlineScript,
  renderDocsPage,
  scalarVersion,
  scriptJson,
} from '../../scripts/docs.js';
import { inlineScriptHashes } from '../../server/http/pages/docs.js';
import { spec } from '../support/contract.js';

describe('renderDocsPage', () => {
  const page = renderDocsPage(spec.document as Record<string, unknown>, '0'.repeat(64));
  const markup = page.replace(/<script[^>]*>[\s\S]*?<\/script>/g, '<script></script>');

  it('loads nothing from another origin: no src, href or url() in its own markup that leaves it', () => {
    expect(markup).not.toMatch(/\s(src|href)="(?:[a-z]+:)?\/\//i);
    expect(markup).not.toMatch(/<script[^>]*\ssrc=/);
    expect(markup).not.toMatch(/url\(/);
    expect(page).toContain('<link rel="icon" href="data:," />');
  });

  it('names no origin: the page is the same for every host', () => {
    expect(markup).not.toMatch(/https?:\/\//);
    expect(page).toContain('"servers":[{"url":"/api/v1"');
  });

  it('carries the spec as JSON that reads back as the spec', () => {
    const json = /<script type="application\/json" id="dss-spec">([\s\S]*?)<\/script>/.exec(page)?.[1] ?? '';
    expect(JSON.parse(json)).toEqual(spec.document);
  });

  it("runs two scripts (Scalar's bundle and the page's start), and turns off Scalar's fonts and telemetry", () => {
    expect(inlineScriptHashes(page)).toHaveLength(2);
    expect(page).toContain('withDefaultFonts: false');
    expect(page).toContain('telemetry: false');
  });
});

describe('text inside script elements', () => {
  it.each([
    ['a closing tag', '</script><img src=x>', '<\\/script><img src=x>'],
    ['an upper-case closing tag', '"</SCRIPT>"', '"<\\/SCRIPT>"'],
    ['a comment opener', "'<!--'", "'<\\!--'"],
  ])('escapes %s in a script', (_what, source, expected) => {
    expect(inlineScript(source)).toBe(expected);
  });

  it('reads the same in JavaScript once escaped', () => {
    const source = "const a = '</script>'; const b = `<!--`; const c = /<!--|-->/.test('<!--');";
    // biome-ignore lint/security/noGlobalEval: the point is to run the escaped text as a script would be run
    expect(eval(`${inlineScript(source)}; [a, b, c]`)).toEqual(['</script>', '<!--', true]);
  });

  it('escapes < in JSON, which stays the same value', () => {
    const value = { text: '</script><!-- <b>' };
    expect(scriptJson(value)).not.toContain('<');
    expect(JSON.parse(scriptJson(value))).toEqual(value);
  });
});

describe('docsAreFresh', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dss-docs-fresh-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const built = (hash: string, scalar = scalarVersion() ?? '') =>
    `<!DOCTYPE html><html><head><meta name="dss-docs-source" content="${hash}" />` +
    `<meta name="dss-docs-scalar" content="${scalar}" />`;

  it.each([
    ['fresh', 'built from the current spec, template, scripts and Scalar', () => built(docsSourceHash()), true],
    ['stale', 'built from other inputs', () => built('0'.repeat(64)), false],
    ['stale', 'built with another Scalar', () => built(docsSourceHash(), '0.0.1'), false],
    ['stale', 'without a source hash', () => '<!DOCTYPE html><html><head><title>old</title>', false],
  ])('a page is %s when %s', (_state, _when, html, fresh) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.html`);
    writeFileSync(file, html());
    expect(docsAreFresh(file)).toBe(fresh);
  });

  it.each([
    ['fresh', 'built from this spec (with whichever Scalar: none is here to build anew)', docsSourceHash(), true],
    ['stale', 'built from another spec', '0'.repeat(64), false],
  ])('in an install without Scalar (npm ci --omit=dev), a copied page is %s when %s', (_state, _when, hash, fresh) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.html`);
    writeFileSync(file, built(hash, '1.72.1'));
    expect(docsAreFresh(file, undefined)).toBe(fresh);
  });

  it('a page that does not exist is stale', () => {
    expect(docsAreFresh(join(dir, 'missing.html'))).toBe(false);
  });
});
