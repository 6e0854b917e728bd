// The security headers of every response, tuned for a JSON API: nothing may be framed, loaded or run from an
// answer, and nothing is cached. /docs replaces the Content-Security-Policy with its own (http/pages/docs.ts), which
// lets that one page run its API reference (Scalar's bundle) and nothing more.
import type { RequestStep } from './every-request.js';

/**
 * A table of ours rather than helmet: the same fixed values go on every answer, also on those written straight to
 * the socket for requests Node's parser refuses (http/pipeline/client-errors.ts), where no middleware runs. The
 * values are helmet's defaults for a page that loads nothing.
 */
export const FIXED_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  // Answers are per account and per moment; a route that may be cached (/docs) says so itself.
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none';frame-ancestors 'none'",
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Origin-Agent-Cluster': '?1',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-DNS-Prefetch-Control': 'off',
  'X-Download-Options': 'noopen',
  'X-Frame-Options': 'DENY',
  'X-Permitted-Cross-Domain-Policies': 'none',
  // The browsers' XSS auditor is gone or harmful; "0" turns off what remains of it.
  'X-XSS-Protection': '0',
};

/**
 * Every answer's headers. HSTS only when `hstsMaxAgeSeconds` is set (HSTS_MAX_AGE_S): it only means something over
 * HTTPS, which a proxy in front of this service terminates, and a browser that saw it would refuse plain HTTP to
 * the host.
 */
export function securityHeaders({ hstsMaxAgeSeconds = 0 } = {}): RequestStep {
  const headers = Object.entries({
    ...FIXED_SECURITY_HEADERS,
    ...(hstsMaxAgeSeconds > 0 ? { 'Strict-Transport-Security': `max-age=${hstsMaxAgeSeconds}` } : {}),
  });
  return (_req, res) => {
    for (const [name, value] of headers) res.setHeader(name, value);
  };
}
