// GET /docs: the API reference page that `npm run docs` builds from the spec (scripts/docs.ts), served as it
// is, with a Content-Security-Policy that keeps every request of the page on this origin.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.js';

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

export function docsPage(file = DOCS_PAGE): RequestHandler {
  return async (_req, res) => {
    let html: Buffer;
    try {
      // Read on every request (the OS caches it): a rebuilt page shows without a restart.
      html = await readFile(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      throw new HttpProblem(
        503,
        'docs-not-built',
        'The API docs have not been built on this server: run `npm run docs` (npm start does it when it can).',
      );
    }
    res.set({
      'Content-Security-Policy': DOCS_CSP,
      'Cache-Control': 'no-cache',
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
    res.type('text/html; charset=utf-8').send(html);
  };
}

/** "/docs/" is the same page: one canonical URL. */
export const docsSlash: RequestHandler = (_req, res) => {
  res.redirect(301, '/docs');
};
