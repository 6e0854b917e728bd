// /api/v1 as routes of the app, built from the route table: one Express route per path of the spec, the base path
// in front, with CORS for every method first, each operation's chain under its method (operationChain: the one
// place its order is written), the CORS preflight and a 405 for any other method
// (`app.route('/api/v1/spaces/:id').all(cors).get(…).patch(…).options(preflight).all(405)`); then, under the base
// path, one 404 for a path no route has and the failed-authentication guard over every answer given before a key
// was accepted. The routes hang on the app itself rather than on a router mounted at /api/v1: a mounted router
// is one more dispatch per request (the mount's match, the path cut and restored). This is the top of http/: it
// composes the steps of the folders below it, which import nothing from here.
import type { ErrorRequestHandler, IRouter, Request, RequestHandler, Response } from 'express';
import { preflight } from '../access/cors.js';
import { requireScopes } from '../access/scopes.js';
import type { CursorSeal } from '../conventions/cursor.js';
import {
  Chain,
  type KeyedRequest,
  type RoutedRequest,
  type Step,
  type ValidatedRequest,
} from '../routing/request-context.js';
import type { Route, RouteTable } from '../routing/routes.js';
import type { RequestValidation } from '../validation/request-validation.js';
import { methodNotAllowed, noSuchPath, requireJsonAcceptable, routed } from './route-ends.js';

export interface ApiSteps {
  /** CORS headers, for every request under the base path (preflights included). */
  cors: RequestHandler;
  /** 401 unless the bearer key belongs to an account. */
  authenticate: Step<RoutedRequest, KeyedRequest>;
  /** The per-key quota (429), and the failed-authentication guard (an error handler after the routes). */
  perKeyLimit: RequestHandler;
  failedAuthGuard: ErrorRequestHandler;
  /** Reads a store or update body (415, 413, 400). */
  readBody: (route: Route) => RequestHandler[];
  /** The validation (422) of each route, once its body is read and its scope checked. */
  validation: RequestValidation;
  /** Seals and opens list cursors: validation checks the one a request sends, and hands the handler the seal. */
  cursors: CursorSeal;
  /** Runs the operation's handler on the validated request and writes its reply. */
  handle: (req: Request, res: Response, request: ValidatedRequest) => Promise<void>;
}

type Method = 'get' | 'put' | 'post' | 'patch' | 'delete';

export function apiRoutes(app: IRouter, routes: RouteTable, basePath: string, steps: ApiSteps): void {
  // "/API/V1/domains" and "/domains/" are not the spec's paths (the app routes strictly and case-sensitively):
  // 404, with a hint (path-hints.ts).
  for (const path of routes.paths) {
    const route = app.route(`${basePath}${path.expressPath}`).all(steps.cors);
    // A GET serves HEAD too (Express's route does; the spec declares HEAD beside every GET).
    for (const operation of path.routes) {
      route[operation.method.toLowerCase() as Method](...operationChain(operation, steps));
    }
    route.options(preflight(path.allow));
    route.all(methodNotAllowed(path.allow));
  }
  app.use(basePath, steps.cors, noSuchPath(routes, basePath));
  app.use(basePath, steps.failedAuthGuard);
}

/** One operation's chain, in the order its steps run, each handing the request it made to the next. */
function operationChain(route: Route, steps: ApiSteps): Array<RequestHandler | ErrorRequestHandler> {
  const keyed = Chain.start(routed(route)) // 400: the query string, a repeated Idempotency-Key
    .step(steps.authenticate) // 401; the key's expiry and address ranges
    .use(steps.perKeyLimit) // 429
    .use(requireJsonAcceptable) // 406
    .use(...(route.operation.body ? steps.readBody(route) : [])) // 415, 413, 400
    .step(requireScopes(route)); // 403: the scope the operation declares
  return steps.validation
    .validate(keyed, route, steps.cursors) // 422
    .end(steps.handle); // the handler (through idempotency/ for a create with a key), its reply
}
