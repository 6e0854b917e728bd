// /api/v1 as routes of the app, built from the route table: one Express route per path of the spec, the base path
// in front, with CORS for every method first, each operation's steps under its method in the order they run, the
// CORS preflight and a 405 for any other method
// (`app.route('/api/v1/spaces/:id').all(cors).get(…).patch(…).options(preflight).all(405)`); then, under the base
// path, one 404 for a path no route has and the failed-authentication guard over every answer given before a key
// was accepted. The routes hang on the app itself rather than on a router mounted at /api/v1: a mounted router
// is one more dispatch per request (the mount's match, the path cut and restored), 4% of a show's CPU.
import type { ErrorRequestHandler, IRouter, RequestHandler } from 'express';
import { preflight } from './cors.js';
import type { RequestValidation } from './request-validation.js';
import type { Route, RouteTable } from './routes.js';
import { methodNotAllowed, noSuchPath, operationOf, requireJsonAcceptable } from './routing.js';
import { requireScopes } from './scopes.js';

export interface ApiSteps {
  /** CORS headers, for every request under the base path (preflights included). */
  cors: RequestHandler;
  /** 401 unless the bearer key belongs to an account. */
  authenticate: RequestHandler;
  /** The per-key quota (429), and the failed-authentication guard (an error handler after the routes). */
  perKeyLimit: RequestHandler;
  failedAuthGuard: ErrorRequestHandler;
  /** Reads a store or update body (415, 413, 400). */
  readBody: RequestHandler[];
  /** The validation (422) of each route, once its body is read and its scope checked. */
  validation: RequestValidation;
  /** Runs the operation's handler and writes its reply. */
  handle: RequestHandler;
}

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

export function apiRoutes(app: IRouter, routes: RouteTable, basePath: string, steps: ApiSteps): void {
  // "/API/V1/domains" and "/domains/" are not the spec's paths (the app routes strictly and case-sensitively):
  // 404, with a hint (path-hints.ts).
  for (const path of routes.paths) {
    const route = app.route(`${basePath}${path.expressPath}`).all(steps.cors);
    // A GET serves HEAD too (Express's route does; the spec declares HEAD beside every GET).
    for (const operation of path.routes) route[operation.method.toLowerCase() as Method](...stepsOf(operation, steps));
    route.options(preflight(path.allow));
    route.all(methodNotAllowed(path.allow));
  }
  app.use(basePath, steps.cors, noSuchPath(routes, basePath));
  app.use(basePath, steps.failedAuthGuard);
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
    requireScopes(route),
    ...steps.validation.stepsOf(route),
    steps.handle,
  ];
}
