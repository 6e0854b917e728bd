// npm run docs: builds the API reference from the bundled spec (generated/openapi.yaml) with Redocly into one
// self-contained HTML page, .docs/index.html, which the service serves at /docs. Nothing on the page is loaded
// from another origin. `--if-stale` (what npm start runs once it listens: server/docs-build.ts) builds only when
// the page is missing or was built from other inputs, and only warns when Redocly is not installed (npm ci
// --omit=dev).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse } from 'yaml';
import { DOCS_PAGE } from '../server/http/docs.js';

const root = resolve(import.meta.dirname, '..');
const redocly = join(root, 'node_modules', '.bin', 'redocly');
const SPEC = join(root, 'generated', 'openapi.yaml');
const CONFIG = join(root, 'spec', 'redocly.yaml');
const TEMPLATE = join(root, 'scripts', 'docs-page.hbs');
const REDOCLY_PACKAGE = join(root, 'node_modules', '@redocly', 'cli', 'package.json');

// Redoc's attribution badge loads the Redocly logo from a CDN at run time; an inline image keeps the credit
// without the request. Replaced in the built page, and the build fails when the text is not found.
const CDN_LOGOS: Record<string, string> = {
  'https://cdn.redoc.ly/redoc/logo-mini-full.svg': logo('Redocly', 52),
  'https://cdn.redoc.ly/redoc/logo-mini.svg': logo('R', 10),
};

function logo(text: string, width: number): string {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="14" viewBox="0 0 ${width} 14"><text x="0" y="11" font-family="system-ui, sans-serif" font-size="11" font-weight="600" fill="#0044d4">${text}</text></svg>`;
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** Hash of everything the page is made from: when it changes, the page is stale. */
export function docsSourceHash(): string {
  const hash = createHash('sha256');
  for (const file of [SPEC, CONFIG, TEMPLATE, import.meta.filename, REDOCLY_PACKAGE]) {
    hash.update(existsSync(file) ? readFileSync(file) : `missing ${file}`);
  }
  return hash.digest('hex');
}

/** The source hash a built page carries in its <head>, read from the first kilobytes only. */
function builtFrom(page: string): string | undefined {
  if (!existsSync(page)) return undefined;
  const head = Buffer.alloc(4096);
  const fd = openSync(page, 'r');
  try {
    const length = readSync(fd, head, 0, head.length, 0);
    return /<meta name="dss-docs-source" content="([0-9a-f]{64})"/.exec(head.toString('utf8', 0, length))?.[1];
  } finally {
    closeSync(fd);
  }
}

export function docsAreFresh(page = DOCS_PAGE): boolean {
  return builtFrom(page) === docsSourceHash();
}

/** Builds the page; written to a temporary file first, so a concurrent reader never sees half a page. */
export function buildDocs(page = DOCS_PAGE): void {
  const info = (parse(readFileSync(SPEC, 'utf8')) as { info: { title: string; summary?: string } }).info;
  mkdirSync(dirname(page), { recursive: true });
  const temporary = `${page}.${process.pid}.tmp`;
  try {
    execFileSync(
      redocly,
      [
        'build-docs',
        SPEC,
        '--inlineBundle',
        '--config',
        CONFIG,
        '--template',
        TEMPLATE,
        '--title',
        `${info.title} — reference`,
        '--templateOptions.sourceHash',
        docsSourceHash(),
        '--templateOptions.description',
        info.summary ?? info.title,
        '-o',
        temporary,
      ],
      // No usage reports from the build, nor from the page (the config's `telemetry: off` covers the page).
      {
        cwd: root,
        stdio: 'pipe',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    writeFileSync(temporary, keepOnOrigin(readFileSync(temporary, 'utf8')));
    renameSync(temporary, page);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Removes what would make the page talk to another origin, and fails when the page still would. */
export function keepOnOrigin(html: string): string {
  let page = html;
  for (const [url, replacement] of Object.entries(CDN_LOGOS)) {
    if (!page.includes(url)) throw new Error(`docs: expected Redoc to reference ${url}; check the page for CDN use`);
    page = page.replaceAll(url, replacement);
  }
  const problems = [
    /<(?:script|img|iframe)[^>]+src="(?:https?:)?\/\//i.test(page) && 'an element loading from another origin',
    /<link[^>]+href="(?:https?:)?\/\//i.test(page) && 'a <link> to another origin (fonts, preloads)',
    /@import\s+url\((?:["']?)(?:https?:)?\/\//i.test(page) && 'a stylesheet @import from another origin',
    /https:\/\/cdn\.redoc\.ly\//.test(page) && 'a reference to the Redocly CDN',
    !page.includes('"disableTelemetry":true') && 'Redoc telemetry left on (set `telemetry: off` in spec/redocly.yaml)',
  ].filter(Boolean);
  if (problems.length > 0) throw new Error(`docs: the page would make requests off its origin: ${problems.join('; ')}`);
  return page;
}

function main(): void {
  const ifStale = process.argv.includes('--if-stale');
  const relative = DOCS_PAGE.slice(root.length + 1);
  if (ifStale && docsAreFresh()) return;
  if (!existsSync(redocly)) {
    const message = `API docs not built: @redocly/cli (a dev dependency) is not installed, so /docs answers 503. Install all dependencies and run \`npm run docs\`.`;
    console.error(message);
    process.exit(ifStale ? 0 : 1);
  }
  const started = Date.now();
  try {
    buildDocs();
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    console.error(`API docs could not be built: ${error instanceof Error ? error.message : String(error)}\n${stderr}`);
    // npm start still starts: the service answers /docs with 503 until the docs build.
    process.exit(ifStale ? 0 : 1);
  }
  console.log(`API docs built into ${relative} in ${Date.now() - started} ms.`);
}

if (process.argv[1] === import.meta.filename) main();
