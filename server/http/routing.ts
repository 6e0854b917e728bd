// Finds the spec operation of an /api/v1 request before anything else looks at it: unknown paths are 404,
// methods the path lacks are 405 with Allow, and unknown query parameters are noted for the validator's report.
import type { RequestHandler } from 'express';
import { type ApiSpec, integerOutOfRange, PLAIN_INTEGER, type Route } from '../spec.js';
import { pathHint } from './path-hints.js';
import { type FieldError, HttpProblem } from './problem.js';
import { context } from './request-context.js';
import { decodesAsUtf8 } from './url-encoding.js';

export function routeToOperation(spec: ApiSpec): RequestHandler {
  return (req, res, next) => {
    const match = spec.match(req.method, req.path);
    if (match.kind === 'not-found') {
      const path = `${req.baseUrl}${req.path}`;
      throw new HttpProblem(404, 'not-found', `There is no resource at ${path}.${pathHint(spec, path)}`);
    }
    if (match.kind === 'method-not-allowed') {
      const allow = match.allow.join(', ');
      throw new HttpProblem(405, 'method-not-allowed', `${req.method} is not allowed here; allowed: ${allow}.`, {
        headers: { Allow: allow },
      });
    }
    // Query strings are read by the rules of form bodies: a malformed or non-UTF-8 %-escape is a 400 either way.
    const query = req.originalUrl.indexOf('?');
    if (query >= 0 && !decodesAsUtf8(req.originalUrl.slice(query + 1))) {
      throw new HttpProblem(
        400,
        'malformed-query',
        'The query string has a malformed %-escape, or one that is not UTF-8.',
      );
    }
    // HEAD runs as GET from here on; Node already knows to send no body for it.
    if (req.method === 'HEAD') req.method = 'GET';
    const ctx = context(res);
    ctx.route = match.route;
    ctx.pathParams = match.pathParams;
    ctx.sentQuery = { ...(req.query as Record<string, string>) };
    ctx.pendingErrors = [
      ...unknownQueryParameters(match.route, ctx.sentQuery),
      ...nonDecimalIntegers(match.route, { path: match.pathParams, query: ctx.sentQuery }),
    ];
    next();
  };
}

function unknownQueryParameters(route: Route, sent: Record<string, unknown>): FieldError[] {
  const known = route.queryNames;
  return Object.keys(sent)
    .filter((name) => !known.includes(name))
    .map((name) => ({
      location: 'query',
      field: name,
      message: known.length
        ? `is not a parameter of this operation; known: ${known.join(', ')}`
        : 'is not a parameter of this operation, which takes none',
    }));
}

/**
 * The validator coerces "1e3", "+1", "01", "1.0" and " 1" to integers; an id or a page number has one
 * spelling, so anything but plain decimal digits is refused here. The range is checked here too, on the
 * text: a number of 309 digits would reach the validator and the database as Infinity.
 */
function nonDecimalIntegers(
  route: Route,
  sent: { path: Record<string, string>; query: Record<string, unknown> },
): FieldError[] {
  return route.parameters
    .filter((p) => (p.in === 'path' || p.in === 'query') && p.integer)
    .flatMap((p) => {
      const value = p.in === 'path' ? sent.path[p.name] : sent.query[p.name];
      if (typeof value !== 'string') return [];
      const message = PLAIN_INTEGER.test(value)
        ? integerOutOfRange(value, p.bounds)
        : 'must be an integer written in plain decimal digits';
      return message ? [{ location: p.in as 'path' | 'query', field: p.name, message }] : [];
    });
}

/** 406 when the Accept header rules out JSON (every answer of the API is JSON). */
export const requireJsonAcceptable: RequestHandler = (req, _res, next) => {
  const accept = req.get('accept');
  if (accept && accept.trim() !== '' && !req.accepts('application/json')) {
    throw new HttpProblem(
      406,
      'not-acceptable',
      `This API answers only application/json; the Accept header "${accept}" rules it out.`,
    );
  }
  next();
};
