// /api/v1 as routes of the app, built from the route table: one Express route per path of the spec, the base path
// in front, with CORS for every method first, each operation's steps under its method (operationSteps: the one
// place their order is written), the CORS preflight and a 405 for any other method
// (`app.route('/api/v1/spaces/:id').all(cors).get(…).patch(…).options(preflight).all(405)`); then, under the base
// path, one 404 for a path no route has and the failed-authentication guard over every answer given before a key
// was accepted. The routes hang on the app itself rather than on a router mounted at /api/v1: a mounted router
// is one more dispatch per request (the mount's match, the path cut and restored).
import type { ErrorRequestHandler, IRouter, RequestHandler } from 'express';
import { preflight } from '../access/cors.js';
import { requireScopes } from '../access/scopes.js';
import type { CursorSeal } from '../conventions/cursor.js';
import type { RequestValidation } from '../validation/request-validation.js';
import type { Route, RouteTable } from './routes.js';
import {
  methodNotAllowed,
  noSuchPath,
  operationOf,
  refuseUnreadableRequest,
  requireJsonAcceptable,
} from './routing.js';

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
  /** Seals and opens list cursors: validation checks the one a request sends. */
  cursors: CursorSeal;
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
    for (const operation of path.routes) {
      route[operation.method.toLowerCase() as Method](...operationSteps(operation, steps));
    }
    route.options(preflight(path.allow));
    route.all(methodNotAllowed(path.allow));
  }
  app.use(basePath, steps.cors, noSuchPath(routes, basePath));
  app.use(basePath, steps.failedAuthGuard);
}

/** One operation's chain, in the order its steps run. */
function operationSteps(route: Route, steps: ApiSteps): Array<RequestHandler | ErrorRequestHandler> {
  return [
    refuseUnreadableRequest, // 400: the query string, a repeated Idempotency-Key
    operationOf(route),
    steps.authenticate, // 401; the key's expiry and address ranges
    steps.perKeyLimit, // 429
    requireJsonAcceptable, // 406
    ...(route.operation.body ? steps.readBody : []), // 415, 413, 400
    requireScopes(route), // 403: the scope the operation declares
    ...steps.validation.stepsOf(route, steps.cursors), // 422
    steps.handle, // the handler (through idempotency/ for a create with a key), its reply
  ];
}
