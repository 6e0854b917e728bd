// GET /docs: the API reference page that `npm run docs` builds from the spec (scripts/docs.ts), showing the
// origin it is served from, gzipped for clients that accept it, revalidated by ETag, under a
// Content-Security-Policy that keeps the page on its origin.
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.js';
import { forOrigin, requestOrigin, varyByOrigin } from './served-origin.js';

const gzipAsync = promisify(gzip);
/** Pages kept ready per origin: a deployment is reached under a few names (localhost, its public host). */
const ORIGINS_KEPT = 8;

/** Where `npm run docs` writes the page (gitignored). */
export const DOCS_PAGE = fileURLToPath(new URL('../../.docs/index.html', import.meta.url));

/**
 * Nothing may be loaded from, sent to or framed by another origin. Redoc needs its inline script and styles,
 * workers and images from blob: URLs (search, downloads) and data: URLs (icons, fonts).
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self' 'unsafe-inline'",
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

/** The page for one origin, gzipped once (it is megabytes of inlined Redoc), and its ETag for revalidation. */
interface Served {
  html: Buffer;
  gzipped: Buffer;
  etag: string;
}

export function docsPage(file = DOCS_PAGE, basePath = '/api/v1'): RequestHandler {
  let built: { version: string; text: string; byOrigin: Map<string, Promise<Served>> } | undefined;
  const load = async (origin: string | undefined): Promise<Served> => {
    // Checked on every request (a stat): a rebuilt page shows without a restart.
    const { mtimeMs, size } = await stat(file);
    const version = `${mtimeMs}:${size}`;
    if (built?.version !== version) built = { version, text: await readFile(file, 'utf8'), byOrigin: new Map() };
    const key = origin ?? '';
    let served = built.byOrigin.get(key);
    if (!served) {
      const html = Buffer.from(forOrigin(built.text, origin, basePath));
      const etag = `"${createHash('sha256').update(html).digest('base64url').slice(0, 27)}"`;
      // Off the event loop; the promise is kept, so concurrent first requests share one compression.
      served = gzipAsync(html).then((gzipped) => ({ html, gzipped, etag }));
      built.byOrigin.set(key, served);
      const oldest = built.byOrigin.keys().next().value;
      if (built.byOrigin.size > ORIGINS_KEPT && oldest !== undefined) built.byOrigin.delete(oldest);
    }
    return served;
  };

  return async (req, res) => {
    let page: Served;
    try {
      page = await load(requestOrigin(req));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new HttpProblem(
        503,
        'docs-not-built',
        'The API docs have not been built on this server: run `npm run docs` (npm start does it when it can).',
      );
    }
    varyByOrigin(req, res);
    res.vary('Accept-Encoding');
    res.set({
      'Content-Security-Policy': DOCS_CSP,
      'Cache-Control': 'no-cache',
      ETag: page.etag,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    if (
      req
        .get('if-none-match')
        ?.split(/\s*,\s*/)
        .includes(page.etag)
    ) {
      res.status(304).end();
      return;
    }
    res.type('text/html; charset=utf-8');
    if (req.acceptsEncodings('gzip', 'identity') === 'gzip') {
      res.set('Content-Encoding', 'gzip').send(page.gzipped);
    } else {
      res.send(page.html);
    }
  };
}

/** "/docs/" is the same page: one canonical URL. */
export const docsSlash: RequestHandler = (_req, res) => {
  res.redirect(301, '/docs');
};
