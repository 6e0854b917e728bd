// The ends of every route of /api/v1 (api-routes.ts): the first step of an operation's chain, which refuses a
// query string or headers it cannot read (400) and makes the routed request (routing/request-context.ts), the query
// string parsed once; the route's own 405 for a method its path lacks; and the 404 under the base path for a path
// no route has.
import type { IncomingMessage } from 'node:http';
import { parse } from 'node:querystring';
import accepts from 'accepts';
import type { Request, RequestHandler, Response } from 'express';
import { timesSent } from '../pipeline/input-limits.js';
import { HttpProblem } from '../problems/problem.js';
import { pathHint } from '../routing/path-hints.js';
import { context, type RoutedRequest } from '../routing/request-context.js';
import type { Route, RouteTable } from '../routing/routes.js';
import { decodesAsUtf8 } from '../validation/url-encoding.js';

const MAX_QUERY_PARAMETERS = 100;

/**
 * The parts of a query string between `&` separators, empty ones too: each is work for every parser that reads
 * the query, and no client needs more than a few.
 */
function countParameters(query: string): number {
  let count = 1;
  for (let at = query.indexOf('&'); at >= 0; at = query.indexOf('&', at + 1)) count++;
  return count;
}

/** The query string as sent (without its `?`), or undefined without one. */
function queryStringOf(url: string): string | undefined {
  const at = url.indexOf('?');
  return at < 0 ? undefined : url.slice(at + 1);
}

/** The last query string read, and what it read: the first step and Express's `req.query` share one parse. */
let lastQuery: { text: string; parameters: Record<string, string | string[]> } | undefined;

/**
 * The parameters of a query string, by node's querystring (as Express's "simple" parser): its "query parser"
 * (app.ts), and the first step of every operation's chain, which reads the same text just before. Each caller
 * gets its own copy (the validator coerces `req.query` in place).
 */
export function parseQuery(text: unknown): Record<string, string | string[]> {
  if (typeof text !== 'string' || text === '') return {};
  let last = lastQuery;
  if (last?.text !== text) {
    last = { text, parameters: { ...parse(text, '&', '=', { maxKeys: 0 }) } as Record<string, string | string[]> };
    lastQuery = last;
  }
  // Spread, not assigned: a parameter named "__proto__" stays a parameter.
  const copy = { ...last.parameters };
  for (const [name, value] of Object.entries(copy)) {
    if (Array.isArray(value))
      Object.defineProperty(copy, name, { value: [...value], enumerable: true, writable: true });
  }
  return copy;
}

/**
 * The first step of an operation's chain: a query string or a header that must come once, refused (400) when it
 * cannot be read; then the routed request, with its path parameters and the query string as sent.
 */
export function routed(route: Route): (req: Request, res: Response) => RoutedRequest {
  return (req, res) => {
    // Query strings are read by the rules of form bodies: a malformed or non-UTF-8 %-escape is a 400 either way.
    const query = queryStringOf(req.originalUrl);
    if (query !== undefined) {
      if (!decodesAsUtf8(query)) {
        throw new HttpProblem(
          'malformed-query',
          'The query string has a malformed %-escape, or one that is not UTF-8.',
        );
      }
      const parameters = countParameters(query);
      if (parameters > MAX_QUERY_PARAMETERS) {
        // Node's parser would keep the first 1000 and drop the rest unseen; a form body has the same limit (413).
        throw new HttpProblem(
          'malformed-query',
          `The query string has ${parameters} parameters (empty ones between two "&" count too); the limit is ${MAX_QUERY_PARAMETERS}.`,
        );
      }
    }
    // Node joins several Idempotency-Key headers into one ("a, b"): a key no client sent.
    const idempotencyKeys = timesSent(req, 'idempotency-key');
    if (idempotencyKeys > 1) {
      throw new HttpProblem(
        'ambiguous-idempotency-key',
        `Send one Idempotency-Key header; this request has ${idempotencyKeys}.`,
      );
    }
    const ctx = context(res);
    ctx.route = route;
    return {
      route,
      requestId: ctx.requestId,
      path: { ...req.params } as Record<string, string>,
      sent: (query === undefined ? {} : parseQuery(query)) as Record<string, string>,
    };
  };
}

/** A path's last step: the method is not one of its operations (`Allow` lists those). */
export function methodNotAllowed(allow: string[]): RequestHandler {
  const methods = allow.join(', ');
  return (req) => {
    throw new HttpProblem('method-not-allowed', `${req.method} is not allowed here; allowed: ${methods}.`, {
      headers: { Allow: methods },
    });
  };
}

/** The last step under the base path: no path of the spec is this one. */
export function noSuchPath(routes: RouteTable, basePath: string): RequestHandler {
  return (req) => {
    const path = `${req.baseUrl}${req.path}`;
    throw new HttpProblem('not-found', `There is no resource at ${path}.${pathHint(routes, basePath, path)}`);
  };
}

// As every answer is sent: a range with a parameter (`application/json; charset=utf-8`) matches only its value.
const API_TYPES = ['application/json; charset=utf-8', 'application/problem+json; charset=utf-8'];

/**
 * Whether an Accept header admits one of the API's two types (RFC 9110 §12.5.1: wildcards, q-values, q=0 as
 * "not this"), by `accepts`, the negotiation Express's own req.accepts runs. No header, or an empty one, admits all.
 */
export function admitsApiTypes(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  return accept === undefined || accept.trim() === '' || accepts(req).type(API_TYPES) !== false;
}

/**
 * 406 only when the Accept header rules out both of the API's types: a client that asks for
 * application/problem+json alone, as a spec-driven tool does for an operation whose only documented body is a
 * problem, is served.
 */
export const requireJsonAcceptable: RequestHandler = (req, _res, next) => {
  if (!admitsApiTypes(req)) {
    throw new HttpProblem(
      'not-acceptable',
      `This API answers application/json and application/problem+json; the Accept header "${req.headers.accept}" rules out both.`,
    );
  }
  next();
};
