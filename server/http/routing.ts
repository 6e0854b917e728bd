// Finds the spec operation of an /api/v1 request before anything else looks at it: unknown paths are 404,
// methods the path lacks are 405 with Allow, and unknown query parameters are noted for the validator's report.
import type { RequestHandler } from 'express';
import type { ApiSpec } from '../spec.js';
import { HttpProblem } from './problem.js';
import { context } from './request-context.js';

export function routeToOperation(spec: ApiSpec): RequestHandler {
  return (req, res, next) => {
    const match = spec.match(req.method, req.path);
    if (match.kind === 'not-found') {
      throw new HttpProblem(404, 'not-found', `There is no resource at ${req.baseUrl}${req.path}.`);
    }
    if (match.kind === 'method-not-allowed') {
      const allow = match.allow.join(', ');
      throw new HttpProblem(405, 'method-not-allowed', `${req.method} is not allowed here; allowed: ${allow}.`, {
        headers: { Allow: allow },
      });
    }
    const known = new Set(match.route.parameters.filter((p) => p.in === 'query').map((p) => p.name));
    const ctx = context(res);
    ctx.route = match.route;
    ctx.pathParams = match.pathParams;
    ctx.sentQuery = { ...(req.query as Record<string, string>) };
    ctx.queryErrors = Object.keys(ctx.sentQuery)
      .filter((name) => !known.has(name))
      .map((name) => ({
        location: 'query' as const,
        field: name,
        message: known.size
          ? `is not a parameter of this operation; known: ${[...known].join(', ')}`
          : 'is not a parameter of this operation, which takes none',
      }));
    next();
  };
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
