// GET /docs: the API reference page that `npm run docs` builds from the spec (scripts/docs.ts). The page names
// no origin (its script takes the browser's), so it is read, gzipped and hashed once per build, and every
// request gets the same bytes whatever its Host: revalidated by ETag, under a Content-Security-Policy that keeps
// the page, and the requests its console sends, on this origin.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { RequestHandler, Response } from 'express';
import type { ApiSpec } from '../../spec-model.js';
import { HttpProblem } from '../problems/problem.js';

const gzipAsync = promisify(gzip);
const GZIP_CHUNK_BYTES = 1024 * 1024;

/** Where `npm run docs` writes the page (gitignored). */
export const DOCS_PAGE = fileURLToPath(new URL('../../../.docs/index.html', import.meta.url));
// The page's builder (Scalar) is a development dependency: an `npm ci --omit=dev` install cannot build the page.
const DOCS_BUILDER = fileURLToPath(
  new URL('../../../node_modules/@scalar/api-reference/package.json', import.meta.url),
);

/** Why there is no page, and how to get one: `npm run docs` where it can run, else a page built elsewhere. */
export function docsNotBuiltDetail(builderInstalled = existsSync(DOCS_BUILDER)): string {
  return builderInstalled
    ? 'The API docs have not been built on this server: run `npm run docs` (npm start does it when it can).'
    : 'The API docs have not been built on this server, and cannot be built here: `npm run docs` needs the ' +
        'development dependencies, which this install (npm ci --omit=dev) left out. Build the page where they are ' +
        'installed and copy its .docs/ folder here (the Docker image does so); the spec is at /openapi.yaml.';
}

/**
 * Nothing may be loaded from, sent to or framed by another origin. Scripts run only when they are the page's
 * own (each inline script by its hash); styles need 'unsafe-inline' (the reference sets style attributes),
 * images and fonts data: and blob: URLs (icons, the spec's download), and the console talks to this origin only.
 */
export function docsCsp(scriptHashes: string[]): string {
  return [
    "default-src 'none'",
    `script-src ${scriptHashes.map((hash) => `'sha256-${hash}'`).join(' ') || "'none'"}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The SHA-256 (base64) of each inline script that runs: every <script> but JSON data blocks. Read from the page's
 * bytes, with no copy of the page as text: the page is megabytes, and every copy at start is memory the service
 * holds until a full collection finds it.
 */
export function inlineScriptHashes(page: Buffer | string): string[] {
  const html = typeof page === 'string' ? Buffer.from(page) : page;
  const hashes: string[] = [];
  for (let from = 0; ; ) {
    const open = findTag(html, '<script', from);
    if (open < 0) break;
    const nameEnd = open + '<script'.length;
    // "<scripts" or "<script-x" is another element.
    if (html[nameEnd] !== GREATER_THAN && !ASCII_SPACE.has(html[nameEnd] ?? 0)) {
      from = nameEnd;
      continue;
    }
    const tagEnd = html.indexOf(GREATER_THAN, nameEnd);
    const close = tagEnd < 0 ? -1 : findTag(html, '</script>', tagEnd + 1);
    if (close < 0) break;
    const attributes = html.toString('latin1', nameEnd, tagEnd);
    if (!/\btype="application\/json"/i.test(attributes) && !/\bsrc=/i.test(attributes)) {
      hashes.push(
        createHash('sha256')
          .update(html.subarray(tagEnd + 1, close))
          .digest('base64'),
      );
    }
    from = close + '</script>'.length;
  }
  return hashes;
}

const LESS_THAN = 0x3c;
const GREATER_THAN = 0x3e;
/** What ends a tag's name in HTML: tab, line feed, form feed, carriage return, space. */
const ASCII_SPACE = new Set([0x09, 0x0a, 0x0c, 0x0d, 0x20]);

/** Where `tag` (lowercase ASCII, from its "<") next starts in `html` at or after `from`, in any letter case. */
function findTag(html: Buffer, tag: string, from: number): number {
  for (let at = html.indexOf(LESS_THAN, from); at >= 0; at = html.indexOf(LESS_THAN, at + 1)) {
    let i = 1;
    for (; i < tag.length; i++) {
      const byte = html[at + i] ?? 0;
      const wanted = tag.charCodeAt(i);
      const isLetter = wanted >= 0x61 && wanted <= 0x7a;
      if (byte !== wanted && !(isLetter && (byte | 0x20) === wanted)) break;
    }
    if (i === tag.length) return at;
  }
  return -1;
}

/** The page, gzipped once (it is megabytes of inlined script), its ETag and its CSP. */
interface Served {
  html: Buffer;
  gzipped: Buffer;
  etag: string;
  csp: string;
}

export interface DocsOptions {
  /** A key the console fills in (npm run sandbox takes any well-formed key). */
  sandboxKey?: string;
  /** Read and compress the page now rather than on the first request (the service does; tests' apps do not). */
  prepareNow?: boolean;
}

/** The page's config block, as the build writes it (`<` escaped: no text in it can end the element). */
const configBlock = (config: { sandboxKey: string | null }) =>
  Buffer.from(
    `<script type="application/json" id="dss-docs-config">${JSON.stringify(config).replaceAll('<', '\\u003c')}</script>`,
  );
const EMPTY_CONFIG = configBlock({ sandboxKey: null });

/** The page as a console key makes it: the build's empty config block filled in. */
function withSandboxKey(page: Buffer, sandboxKey: string): Buffer {
  const at = page.indexOf(EMPTY_CONFIG);
  if (at < 0) return page;
  return Buffer.concat([page.subarray(0, at), configBlock({ sandboxKey }), page.subarray(at + EMPTY_CONFIG.length)]);
}

/** The page's bytes as read (no copy as text), gzipped off the event loop, hashed: once per build. */
async function prepare(file: string, { sandboxKey }: DocsOptions): Promise<Served> {
  const read = await readFile(file);
  const html = sandboxKey ? withSandboxKey(read, sandboxKey) : read;
  const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
  // In 1 MB pieces: at zlib's default 16 KB, the event loop spends over 100 ms handing the megabytes on.
  const gzipped = await gzipAsync(html, { chunkSize: GZIP_CHUNK_BYTES });
  return { html, gzipped, etag, csp: docsCsp(inlineScriptHashes(html)) };
}

/**
 * Each page as prepared, by file and console key: the promise is kept, so concurrent first requests share one
 * read and one compression, and so does every app of the process (the warm-up's copy serves the same bytes).
 */
const builds = new Map<string, { version: string; served: Promise<Served> }>();

export function docsPage(file = DOCS_PAGE, options: DocsOptions = {}): RequestHandler {
  const id = `${file}\u0000${options.sandboxKey ?? ''}`;
  const load = async (): Promise<Served> => {
    // Checked on every request (a stat): a rebuilt page shows without a restart.
    const { mtimeMs, size } = await stat(file);
    const version = `${mtimeMs}:${size}`;
    let built = builds.get(id);
    if (built?.version !== version) {
      const served = prepare(file, options);
      built = { version, served };
      builds.set(id, built);
      served.catch(() => {
        if (builds.get(id)?.served === served) builds.delete(id);
      });
    }
    return built.served;
  };

  // A page not built yet is read when it is asked for.
  if (options.prepareNow) load().catch(() => undefined);

  return async (req, res) => {
    let page: Served;
    try {
      page = await load();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new HttpProblem('docs-not-built', docsNotBuiltDetail());
    }
    res.vary('Accept-Encoding');
    res.set({
      'Content-Security-Policy': page.csp,
      'Cache-Control': 'no-cache',
      ETag: page.etag,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    const held = req.get('if-none-match')?.split(',') ?? [];
    if (held.some((tag) => tag.trim() === page.etag)) {
      res.status(304).end();
      return;
    }
    res.type('text/html; charset=utf-8');
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      res.set('Content-Encoding', 'gzip');
      sendInSlices(res, page.gzipped);
    } else {
      sendInSlices(res, page.html);
    }
  };
}

/** Bytes handed to the socket per turn of the event loop when a page is sent. */
const SLICE_BYTES = 64 * 1024;

/**
 * Sends a large body a slice at a time, the next once the last was handed to the kernel and the event loop had
 * its turn: a client that reads slowly makes progress that SEND_TIMEOUT_S sees (Node restarts a socket's timer
 * when a write completes, and one 4 MB write completes only at its end), and many readers at once share the
 * loop with every other request instead of each copying megabytes into the kernel in one go.
 */
function sendInSlices(res: Response, body: Buffer): void {
  res.setHeader('Content-Length', body.length);
  if (res.req.method === 'HEAD') {
    res.end();
    return;
  }
  let at = 0;
  const next = () => {
    if (res.destroyed) return;
    const slice = body.subarray(at, at + SLICE_BYTES);
    at += slice.length;
    if (at >= body.length) res.end(slice);
    else res.write(slice, () => setImmediate(next));
  };
  next();
}

/**
 * GET /: a pointer to the docs. Browsers follow the redirect; a client that does not still reads where the
 * reference, the spec and the API are.
 */
export function apiIndex(spec: ApiSpec): RequestHandler {
  const body = JSON.stringify({
    message: 'This is the domain-space-service API. Its reference is at /docs.',
    docs: '/docs',
    openapi: ['/openapi.json', '/openapi.yaml'],
    api: spec.basePath,
  });
  return (_req, res) => {
    res.status(302).location('/docs').type('application/json').send(body);
  };
}

/** "/docs/" is the same page: one canonical URL. */
export const docsSlash: RequestHandler = (_req, res) => {
  res.redirect(301, '/docs');
};
