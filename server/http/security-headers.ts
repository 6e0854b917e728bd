// The security headers of every response (helmet), tuned for a JSON API: nothing may be framed, loaded or
// run from an answer, and nothing is cached. /docs replaces the Content-Security-Policy with its own
// (http/docs.ts), which lets that one page run Redoc and nothing more.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * HSTS is off unless `hstsMaxAgeSeconds` is set (HSTS_MAX_AGE_S): it only means something over HTTPS, which
 * a proxy in front of this service terminates, and a browser that saw it would refuse plain HTTP to the host.
 */
function headersFor(hstsMaxAgeSeconds: number) {
  return helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    strictTransportSecurity: hstsMaxAgeSeconds > 0 ? { maxAge: hstsMaxAgeSeconds, includeSubDomains: false } : false,
    xFrameOptions: { action: 'deny' },
  });
}

export function securityHeaders({ hstsMaxAgeSeconds = 0 } = {}): RequestHandler {
  const helmetHeaders = headersFor(hstsMaxAgeSeconds);
  return (req, res, next) => {
    // Answers are per account and per moment; a route that may be cached (/docs) says so itself.
    res.setHeader('Cache-Control', 'no-store');
    helmetHeaders(req, res, next);
  };
}

/** The same headers as fixed values, for answers written on the socket before Express sees a request. */
export const FIXED_SECURITY_HEADERS: Record<string, string> = (() => {
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  const res = {
    setHeader: (name: string, value: string) => {
      headers[name] = value;
    },
    removeHeader: () => {},
  };
  headersFor(0)({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
})();
