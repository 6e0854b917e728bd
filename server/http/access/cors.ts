// Cross-origin access for browser apps. The API authenticates with a bearer key that a browser never attaches
// by itself (no cookies), so letting another origin call it exposes nothing that origin doesn't already hold.
import type { RequestHandler } from 'express';

/** `*` (any origin), a list of exact origins such as `https://app.example`, or `[]` for none. */
export type CorsOrigins = '*' | string[];

const ALLOWED_REQUEST_HEADERS =
  'Accept, Authorization, Content-Type, X-Request-Id, Idempotency-Key, If-Match, If-None-Match';
const EXPOSED_HEADERS =
  'Location, RateLimit, RateLimit-Policy, Retry-After, WWW-Authenticate, X-Request-Id, ETag, Idempotent-Replayed, X-Accepted-Scopes';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Adds CORS headers to answers for allowed origins, on every request under the base path. A preflight request
 * from an allowed origin is answered by its path's route (`preflight`); anything else, including a plain OPTIONS,
 * goes on to the router, which answers 404 or 405 as the spec says.
 */
export function cors(origins: CorsOrigins): RequestHandler {
  return (req, res, next) => {
    const origin = req.get('origin');
    // With a list, the answer depends on the Origin header whether or not it is allowed.
    if (origins !== '*' && origins.length > 0) res.vary('Origin');
    if (!origin || (origins !== '*' && !origins.includes(origin))) return next();
    res.set('Access-Control-Allow-Origin', origins === '*' ? '*' : origin);
    if (req.method !== 'OPTIONS' || !req.get('access-control-request-method')) {
      res.set('Access-Control-Expose-Headers', EXPOSED_HEADERS);
    }
    next();
  };
}

/** A path's answer to a preflight from an allowed origin (204), with the methods the spec lists for it. */
export function preflight(allow: string[]): RequestHandler {
  const methods = allow.join(', ');
  return (req, res, next) => {
    if (!res.get('Access-Control-Allow-Origin') || !req.get('access-control-request-method')) return next();
    res.set({
      'Access-Control-Allow-Methods': methods,
      'Access-Control-Allow-Headers': ALLOWED_REQUEST_HEADERS,
      'Access-Control-Max-Age': PREFLIGHT_MAX_AGE_SECONDS,
    });
    res.status(204).end();
  };
}

/** Reads `CORS_ORIGINS`: `*`, `none`, or a comma-separated list of origins. */
export function parseCorsOrigins(value: string): CorsOrigins | { error: string } {
  const trimmed = value.trim();
  if (trimmed === '*') return '*';
  if (trimmed === 'none' || trimmed === '') return [];
  const origins = trimmed.split(',').map((entry) => entry.trim());
  const bad = origins.filter((entry) => !isOrigin(entry));
  if (bad.length > 0) {
    return {
      error: `CORS_ORIGINS must be *, none, or origins like https://app.example separated by commas (bad: ${bad.join(', ')})`,
    };
  }
  return origins;
}

function isOrigin(entry: string): boolean {
  try {
    const url = new URL(entry);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === entry;
  } catch {
    return false;
  }
}
