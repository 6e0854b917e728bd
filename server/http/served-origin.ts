// The docs page and the spec documents show the origin they are served from: the spec's samples are written for
// http://127.0.0.1:3000 (the default of `npm start`), and its one server is the relative /api/v1. Served, both
// become the request's origin, so a pasted sample or a generator pointed at /openapi.json reaches this deployment.
import type { Request, RequestHandler, Response } from 'express';
import type { ApiSpec } from '../spec.js';

/** The origin the spec's code samples and guide are written for. */
export const SAMPLE_ORIGIN = 'http://127.0.0.1:3000';

// A host name or an IP literal, with an optional port: nothing a Host header could smuggle into a page.
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The request's origin: Host (X-Forwarded-Host and -Proto only when Express's `trust proxy` is set), or
 * undefined when it is not a plain host, in which case the documents are served as written.
 */
export function requestOrigin(req: Request): string | undefined {
  const host = req.host;
  if (!host || !HOST.test(host) || !['http', 'https'].includes(req.protocol)) return undefined;
  return `${req.protocol}://${host.toLowerCase()}`;
}

/** What the answer depends on, for caches. */
export function varyByOrigin(req: Request, res: Response): void {
  res.vary('Host');
  if (req.app.get('trust proxy')) res.vary('X-Forwarded-Host').vary('X-Forwarded-Proto');
}

/** A document (YAML, JSON, or the docs page with the spec inside) for an origin. */
export function forOrigin(text: string, origin: string | undefined, basePath: string): string {
  if (!origin || origin === SAMPLE_ORIGIN) return text;
  return text
    .replaceAll(SAMPLE_ORIGIN, origin)
    .replace(`\nservers:\n  - url: ${basePath}\n`, `\nservers:\n  - url: ${origin}${basePath}\n`)
    .replaceAll(`"servers":[{"url":"${basePath}"`, `"servers":[{"url":"${origin}${basePath}"`);
}

/** GET /openapi.json and /openapi.yaml: the bundled spec, with this deployment as its server. */
export function specDocument(spec: ApiSpec, format: 'json' | 'yaml'): RequestHandler {
  const text = format === 'json' ? spec.json : spec.yaml;
  const type = format === 'json' ? 'application/json' : 'application/yaml';
  return (req, res) => {
    varyByOrigin(req, res);
    res.type(type).send(forOrigin(text, requestOrigin(req), spec.basePath));
  };
}
