// npm run docs: builds the API reference from the bundled spec (generated/openapi.json) into one self-contained
// HTML page, .docs/index.html, which the service serves at /docs: Scalar's API reference (the reference, a
// console that sends requests to the serving host, code samples in many languages) from its offline browser
// bundle, and scripts/docs-page.js to start it. The page names no origin, so it is the same bytes for every host.
// `--if-stale` (what npm start runs once it listens: server/docs-build.ts) builds only when the page is missing
// or was built from other inputs, and only warns when Scalar is not installed (npm ci --omit=dev).
import { createHash } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DOCS_PAGE } from '../server/http/pages/docs.js';

const root = resolve(import.meta.dirname, '..');
const SPEC = join(root, 'generated', 'openapi.json');
const TEMPLATE = join(root, 'scripts', 'docs-page.hbs');
const START = join(root, 'scripts', 'docs-page.js');
const SCALAR_PACKAGE = join(root, 'node_modules', '@scalar', 'api-reference', 'package.json');

/** Scalar's offline bundle: the file its package.json names as the browser entry point. */
function scalarBundle(): string {
  const manifest = JSON.parse(readFileSync(SCALAR_PACKAGE, 'utf8')) as { browser?: string };
  if (!manifest.browser) throw new Error('docs: @scalar/api-reference names no browser bundle in its package.json');
  return join(dirname(SCALAR_PACKAGE), manifest.browser);
}

/**
 * Hash of what the page is made from in this repository (the spec, the template, the scripts): when it changes,
 * the page is stale. Scalar, a development package, counts by its version, kept apart (scalarVersion): an
 * install without it (npm ci --omit=dev, the image) still tells a page of this spec from one of another.
 */
export function docsSourceHash(): string {
  const hash = createHash('sha256');
  for (const file of [SPEC, TEMPLATE, START, import.meta.filename]) {
    hash.update(existsSync(file) ? readFileSync(file) : `missing ${file}`);
  }
  return hash.digest('hex');
}

/** The version of Scalar installed, or undefined where it is not (a production install). */
export function scalarVersion(): string | undefined {
  if (!existsSync(SCALAR_PACKAGE)) return undefined;
  return (JSON.parse(readFileSync(SCALAR_PACKAGE, 'utf8')) as { version?: string }).version ?? '';
}

/** What a built page says it was made from (in its <head>), read from its first kilobytes only. */
function builtFrom(page: string): { source?: string; scalar?: string } {
  if (!existsSync(page)) return {};
  const head = Buffer.alloc(4096);
  const fd = openSync(page, 'r');
  try {
    const text = head.toString('utf8', 0, readSync(fd, head, 0, head.length, 0));
    return {
      source: /<meta name="dss-docs-source" content="([0-9a-f]{64})"/.exec(text)?.[1],
      scalar: /<meta name="dss-docs-scalar" content="([^"]*)"/.exec(text)?.[1],
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether the page was built from this repository's spec, template and scripts, and from the Scalar installed
 * (where none is, the page cannot be built anew, and one of this spec is as fresh as can be had).
 */
export function docsAreFresh(page = DOCS_PAGE, scalar = scalarVersion()): boolean {
  const built = builtFrom(page);
  return built.source === docsSourceHash() && (scalar === undefined || built.scalar === scalar);
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c] as string);

/** JSON inside <script type="application/json">: `<` escaped, so no text in it can end or open an element. */
export const scriptJson = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * Script text inlined in a <script> element. The HTML parser ends the element at the first `</script`, and
 * `<!--` can make it miss the real end; in JavaScript `<\/` and `<\!--` read the same inside strings, regular
 * expressions and comments, which is where a bundle has them.
 */
export function inlineScript(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1').replaceAll('<!--', '<\\!--');
}

/** The page's HTML, from the spec document and the scripts. */
export function renderDocsPage(spec: Record<string, unknown>, sourceHash: string): string {
  const info = spec.info as { title: string; summary?: string };
  const values: Record<string, string> = {
    sourceHash,
    scalarVersion: escapeHtml(scalarVersion() ?? ''),
    title: escapeHtml(`${info.title} — reference`),
    description: escapeHtml(info.summary ?? info.title),
    spec: scriptJson(spec),
    // What the service fills in as it serves the page (server/http/pages/docs.ts): the sandbox's key.
    config: scriptJson({ sandboxKey: null }),
    scalar: inlineScript(readFileSync(scalarBundle(), 'utf8')),
    start: inlineScript(readFileSync(START, 'utf8')),
  };
  // One pass over the template, so that no value is searched for another one's placeholder.
  return readFileSync(TEMPLATE, 'utf8')
    .replace(/<!--[\s\S]*?-->\n/, '')
    .replace(/\{\{(\w+)\}\}/g, (_match, name: string) => {
      const value = values[name];
      if (value === undefined) throw new Error(`docs: the template names {{${name}}}, which the build does not fill`);
      return value;
    });
}

/** Builds the page; written to a temporary file first, so a concurrent reader never sees half a page. */
export function buildDocs(page = DOCS_PAGE): void {
  const spec = JSON.parse(readFileSync(SPEC, 'utf8')) as Record<string, unknown>;
  const html = renderDocsPage(spec, docsSourceHash());
  mkdirSync(dirname(page), { recursive: true });
  const temporary = `${page}.${process.pid}.tmp`;
  writeFileSync(temporary, html);
  renameSync(temporary, page);
}

function main(): void {
  const ifStale = process.argv.includes('--if-stale');
  const relative = DOCS_PAGE.slice(root.length + 1);
  if (ifStale && docsAreFresh()) return;
  if (!existsSync(SCALAR_PACKAGE)) {
    const served = existsSync(DOCS_PAGE) ? '/docs serves the page built from an earlier spec' : '/docs answers 503';
    const message = `API docs not built: @scalar/api-reference (a dev dependency) is not installed, so ${served}. Install all dependencies and run \`npm run docs\`.`;
    console.error(message);
    process.exit(ifStale ? 0 : 1);
  }
  const started = Date.now();
  try {
    buildDocs();
  } catch (error) {
    console.error(`API docs could not be built: ${error instanceof Error ? error.message : String(error)}`);
    // npm start still starts: the service answers /docs with 503 until the docs build.
    process.exit(ifStale ? 0 : 1);
  }
  console.log(`API docs built into ${relative} in ${Date.now() - started} ms.`);
}

if (process.argv[1] === import.meta.filename) main();
