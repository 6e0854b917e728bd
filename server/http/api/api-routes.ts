// /api/v1 as one layer of the app, built from the route table: the path found by its pattern, CORS for every
// method first, then each operation's chain under its method (operationChain: the one place its order is
// written), the CORS preflight and a 405 for any other method; then, under the base path, one 404 for a path no
// route has and the failed-authentication guard over every answer given before a key was accepted. It answers
// as an Express route per path would (`app.route('/api/v1/spaces/:id').all(cors).get(…).options(preflight).all(405)`,
// HEAD served by GET's chain), as one layer that runs each chain with routing/layers.ts: a route per path and a
// layer per step cost Express's router a match per path and a dispatch per step, 7% of a `show`'s CPU.
// The layer hangs on the app itself rather than on a router mounted at /api/v1, which would cut the path and
// restore it. This is the top of http/: it composes the steps of the folders below it, which import nothing from
// here.
import type { ErrorRequestHandler, IRouter, NextFunction, Request, RequestHandler, Response } from 'express';
import { preflight } from '../access/cors.js';
import { requireScopes } from '../access/scopes.js';
import type { CursorSeal } from '../conventions/cursor.js';
import { malformedPath } from '../problems/errors.js';
import { inOrder, type Layer } from '../routing/layers.js';
import {
  Chain,
  type KeyedRequest,
  type RoutedRequest,
  type Step,
  type ValidatedRequest,
} from '../routing/request-context.js';
import type { PathRoutes, Route, RouteTable } from '../routing/routes.js';
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

type Handler = (req: Request, res: Response, next: NextFunction) => void;

export function apiRoutes(app: IRouter, routes: RouteTable, basePath: string, steps: ApiSteps): void {
  const paths = routes.paths.map((path) => ({ path, ...pathHandlers(path, steps) }));
  app.use((req, res, next) => {
    // "/API/V1/domains" and "/domains/" are not the spec's paths (strict and case-sensitive, as the app routes):
    // 404 below, with a hint (path-hints.ts).
    const full = req.path;
    if (!full.startsWith(basePath)) return next();
    const below = full.slice(basePath.length);
    for (const { path, byMethod, otherMethods } of paths) {
      const match = path.pattern.exec(below);
      if (!match) continue;
      let parameters: Record<string, string>;
      try {
        parameters = parametersOf(path, match);
      } catch {
        return next(malformedPath());
      }
      req.params = parameters;
      const handler = byMethod.get(req.method === 'HEAD' ? 'GET' : req.method) ?? otherMethods;
      return handler(req, res, next);
    }
    next();
  });
  app.use(basePath, steps.cors, noSuchPath(routes, basePath));
  app.use(basePath, steps.failedAuthGuard);
}

/** A path's handlers: each operation's chain and OPTIONS by method, and the 405 of any other method. */
function pathHandlers(path: PathRoutes, steps: ApiSteps): { byMethod: Map<string, Handler>; otherMethods: Handler } {
  const refuse = methodNotAllowed(path.allow);
  const byMethod = new Map<string, Handler>(
    path.routes.map((operation) => [operation.method, inOrder([steps.cors, ...operationChain(operation, steps)])]),
  );
  byMethod.set('OPTIONS', inOrder([steps.cors, preflight(path.allow), refuse]));
  return { byMethod, otherMethods: inOrder([steps.cors, refuse]) };
}

/** The path's parameters as Express gives them (decoded); a malformed %-escape throws. */
function parametersOf(path: PathRoutes, match: RegExpExecArray): Record<string, string> {
  const parameters: Record<string, string> = {};
  path.parameterNames.forEach((name, index) => {
    parameters[name] = decodeURIComponent(match[index + 1] ?? '');
  });
  return parameters;
}

/** One operation's chain, in the order its steps run, each handing the request it made to the next. */
function operationChain(route: Route, steps: ApiSteps): Layer[] {
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
