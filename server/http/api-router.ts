// /api/v1 as an Express router built from the route table: one Express route per path of the spec, with each
// operation's steps under its method in the order they run, the CORS preflight and a 405 for any other method
// (`router.route(path).get(…).patch(…).options(preflight).all(405)`), then one 404 for a path no route has and the
// failed-authentication guard over every answer given before a key was accepted.
import express, { type ErrorRequestHandler, type RequestHandler, type Router } from 'express';
import { preflight } from './cors.js';
import type { RequestValidation } from './request-validation.js';
import type { Route, RouteTable } from './routes.js';
import { methodNotAllowed, noSuchPath, operationOf, requireJsonAcceptable } from './routing.js';

export interface ApiSteps {
  /** CORS headers, for every request under the base path (preflights included). */
  cors: RequestHandler;
  /** 401 unless the bearer key belongs to an account. */
  authenticate: RequestHandler;
  /** The per-key quota (429), and the failed-authentication guard (an error handler, at the router's end). */
  perKeyLimit: RequestHandler;
  failedAuthGuard: ErrorRequestHandler;
  /** Reads a store or update body (415, 413, 400). */
  readBody: RequestHandler[];
  /** The scope check (403) and the validation (422) of each route, once its body is read. */
  validation: RequestValidation;
  /** Runs the operation's handler and writes its reply. */
  handle: RequestHandler;
}

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

export function apiRouter(routes: RouteTable, basePath: string, steps: ApiSteps): Router {
  // "/API/V1/domains" and "/domains/" are not the spec's paths: 404, with a hint (path-hints.ts).
  const router = express.Router({ caseSensitive: true, strict: true });
  router.use(steps.cors);
  for (const path of routes.paths) {
    const route = router.route(path.expressPath);
    // A GET serves HEAD too (Express's route does; the spec declares HEAD beside every GET).
    for (const operation of path.routes) route[operation.method.toLowerCase() as Method](...stepsOf(operation, steps));
    route.options(preflight(path.allow));
    route.all(methodNotAllowed(path.allow));
  }
  router.use(noSuchPath(routes, basePath));
  router.use(steps.failedAuthGuard);
  return router;
}

/**
 * One operation's chain: routed -> key (401) -> quota (429) -> Accept (406) -> [body] -> scope (403) -> 422
 * -> handler.
 */
function stepsOf(route: Route, steps: ApiSteps): Array<RequestHandler | ErrorRequestHandler> {
  return [
    operationOf(route),
    steps.authenticate,
    steps.perKeyLimit,
    requireJsonAcceptable,
    ...(route.operation.body ? steps.readBody : []),
    ...steps.validation.stepsOf(route),
    steps.handle,
  ];
}
