// /api/v1 as an Express router built from the spec: one route per operation, `router[method](path, ...steps)`
// with the steps that operation needs, in the order they run, then one fallback for the requests no route took
// (404, 405) and the failed-authentication guard over every answer given before a key was accepted.
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import type { ApiSpec, Route } from '../spec.js';
import { noOperation, operationOf, requireJsonAcceptable } from './routing.js';

export interface ApiSteps {
  /** CORS, for every request under the base path (preflights included). */
  cors: RequestHandler;
  /** 401 unless the bearer key belongs to an account. */
  authenticate: RequestHandler;
  /** The per-key quota (429), and the failed-authentication guard (an error handler, at the router's end). */
  perKeyLimit: RequestHandler;
  failedAuthGuard: ErrorRequestHandler;
  /** 403 unless the key holds the scope the operation declares (before its body is read). */
  authorize: Array<RequestHandler | ErrorRequestHandler>;
  /** Reads a store or update body (415, 413, 400). */
  readBody: RequestHandler[];
  /** Validation of the routed request (422), the validator's middleware among them. */
  validate: Array<RequestHandler | ErrorRequestHandler>;
  /** Runs the operation's handler and writes its reply. */
  handle: RequestHandler;
}

/** `/spaces/{id}` as Express writes it: `/spaces/:id`. */
export function expressPath(template: string): string {
  return template.replace(/\{([^{}/]+)\}/g, ':$1');
}

export function apiRouter(spec: ApiSpec, steps: ApiSteps): Router {
  // "/API/V1/domains" and "/domains/" are not the spec's paths: 404, with a hint (routing.ts).
  const router = express.Router({ caseSensitive: true, strict: true });
  router.use(steps.cors);
  for (const route of spec.operations) {
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    // A GET route serves HEAD too (Express's router does; the spec declares HEAD beside every GET).
    router[method](expressPath(route.template), ...stepsOf(route, steps));
  }
  router.use(noOperation(spec));
  router.use(steps.failedAuthGuard);
  return router;
}

/** One operation's chain: routed -> key (401) -> quota (429) -> scope (403) -> Accept (406) -> [body] -> 422 -> handler. */
function stepsOf(route: Route, steps: ApiSteps): Array<RequestHandler | ErrorRequestHandler> {
  return [
    operationOf(route),
    steps.authenticate,
    steps.perKeyLimit,
    ...steps.authorize,
    requireJsonAcceptable,
    ...(route.operation.requestBody ? steps.readBody : []),
    ...steps.validate,
    steps.handle,
  ];
}
