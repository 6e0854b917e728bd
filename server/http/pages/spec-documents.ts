// GET /openapi.json and /openapi.yaml: the bundled spec, with the origin it is served from as its server and in
// its samples, so that a tool pointed at https://api.example/openapi.yaml (a generator, `redocly respect`)
// calls https://api.example/api/v1 and a pasted sample reaches this deployment. The document is split once where
// the origin goes, so each answer costs the same whatever its Host: the parts joined around it, nothing kept.
import type { Request, RequestHandler, Response } from 'express';
import type { ApiSpec } from '../../spec-model.js';

/** The origin the spec's code samples and guide are written for (what `npm start` listens on). */
export const SAMPLE_ORIGIN = 'http://127.0.0.1:3000';

// A host name or an IP literal, with an optional port: nothing a Host header could smuggle into a document.
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The request's origin: Host (X-Forwarded-Host and -Proto only when Express's `trust proxy` is set), or
 * undefined when it is not a plain host, in which case the document is served as written.
 */
export function requestOrigin(req: Request): string | undefined {
  const host = req.host;
  if (!host || host.length > 300 || !HOST.test(host) || !['http', 'https'].includes(req.protocol)) return undefined;
  return `${req.protocol}://${host.toLowerCase()}`;
}

/** What the answer depends on, for caches. */
function varyByOrigin(req: Request, res: Response): void {
  res.vary('Host');
  if (req.app.get('trust proxy')) res.vary('X-Forwarded-Host').vary('X-Forwarded-Proto');
}

/** A document split where the origin goes: its samples' origin, and before its relative server URL. */
export function splitAtOrigin(text: string, format: 'json' | 'yaml', basePath: string): string[] {
  const server = format === 'json' ? `"servers":[{"url":"${basePath}"` : `\nservers:\n  - url: ${basePath}\n`;
  const at = text.indexOf(server);
  const withServer =
    at < 0
      ? text
      : `${text.slice(0, at)}${server.replace(basePath, `\u0000${basePath}`)}${text.slice(at + server.length)}`;
  return withServer.replaceAll(SAMPLE_ORIGIN, '\u0000').split('\u0000');
}

export function specDocument(spec: ApiSpec, format: 'json' | 'yaml'): RequestHandler {
  const type = format === 'json' ? 'application/json; charset=utf-8' : 'application/yaml; charset=utf-8';
  let parts: string[] | undefined;
  return (req, res) => {
    const text = format === 'json' ? spec.json : spec.yaml;
    parts ??= splitAtOrigin(text, format, spec.basePath);
    varyByOrigin(req, res);
    const origin = requestOrigin(req);
    res.type(type).send(origin ? parts.join(origin) : text);
  };
}
