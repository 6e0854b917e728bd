// The security headers of every response (helmet), tuned for a JSON API: nothing may be framed, loaded or
// run from an answer, and nothing is cached. /docs replaces the Content-Security-Policy with its own
// (http/docs.ts), which lets that one page run Redoc and nothing more.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * Helmet's headers as fixed values: its middleware sets the same values on every response, so it runs once
 * here, and each request only copies them. HSTS is off unless `hstsMaxAgeSeconds` is set (HSTS_MAX_AGE_S):
 * it only means something over HTTPS, which a proxy in front of this service terminates, and a browser that
 * saw it would refuse plain HTTP to the host.
 */
function headersFor(hstsMaxAgeSeconds: number): Record<string, string> {
  // Answers are per account and per moment; a route that may be cached (/docs) says so itself.
  const headers: Record<string, string> = { 'Cache-Control': 'no-store' };
  const res = {
    setHeader: (name: string, value: string) => {
      headers[name] = value;
    },
    removeHeader: () => {},
  };
  helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    strictTransportSecurity: hstsMaxAgeSeconds > 0 ? { maxAge: hstsMaxAgeSeconds, includeSubDomains: false } : false,
    xFrameOptions: { action: 'deny' },
  })({} as IncomingMessage, res as unknown as ServerResponse, () => {});
  return headers;
}

/** The headers without HSTS: every answer's by default, and those written on the socket before Express sees one. */
export const FIXED_SECURITY_HEADERS: Record<string, string> = headersFor(0);

export function securityHeaders({ hstsMaxAgeSeconds = 0 } = {}): RequestHandler {
  const headers = Object.entries(hstsMaxAgeSeconds > 0 ? headersFor(hstsMaxAgeSeconds) : FIXED_SECURITY_HEADERS);
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
