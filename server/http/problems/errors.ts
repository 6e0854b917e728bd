// The one error handler: it writes the problem each step raised (as application/problem+json with the
// request id); a fault of the database is a 503 with Retry-After; a conditional write that found the record at
// another version than If-Match named is a 412, whichever handler made it; anything else thrown is a server error,
// which says nothing of internals and is logged in full.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { DatabaseUnavailable, FAULTS } from '../../db/faults.js';
import { VersionMismatchError } from '../../db/owned.js';
import type { Logger } from '../../logger.js';
import { pathHint } from '../routing/path-hints.js';
import { context } from '../routing/request-context.js';
import type { RouteTable } from '../routing/routes.js';
import { HttpProblem, PROBLEM_TYPE_BASE, preconditionFailed, problemBody } from './problem.js';

const INTERNAL_DETAIL = 'Something went wrong on our side. Quote the request id to support.';
const INTERNAL_BODY = (requestId: string) => ({
  type: `${PROBLEM_TYPE_BASE}internal`,
  title: 'Internal Server Error',
  status: 500,
  detail: INTERNAL_DETAIL,
  request_id: requestId,
});

export function problemHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, next) => {
    const ctx = context(res);
    const where = { request_id: ctx.requestId, method: req.method, path: req.path };
    const problem =
      error instanceof HttpProblem
        ? error
        : error instanceof DatabaseUnavailable
          ? unavailable(error)
          : error instanceof VersionMismatchError
            ? preconditionFailed(error.record, error.id)
            : isMalformedPathEscape(error)
              ? malformedPath()
              : new HttpProblem('internal', INTERNAL_DETAIL);
    if (error instanceof DatabaseUnavailable) {
      // The dependency's fault, not ours: the client may retry; the log says what the database said.
      logger.warn('request failed: database unavailable', { ...where, kind: error.kind, error: error.message });
    } else if (!(error instanceof HttpProblem || error instanceof VersionMismatchError) || problem.status === 500) {
      logger.error('request failed', {
        ...where,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        // The response validator's findings (tests check every response against the spec).
        details: (error as { errors?: unknown } | null)?.errors,
      });
    }
    if (res.headersSent) return next(error);
    ctx.problemKind = problem.kind;
    try {
      res.set(problem.extra.headers ?? {});
      res.status(problem.status).type('application/problem+json').json(problemBody(problem, ctx.requestId));
    } catch (failure) {
      // Never fall through to Express's own handler, whose HTML page shows the stack outside production.
      logger.error('error handler failed', { request_id: ctx.requestId, error: String(failure) });
      res
        .status(500)
        .type('application/problem+json')
        .send(JSON.stringify(INTERNAL_BODY(ctx.requestId)));
    }
  };
}

/** The 400 of a path whose %-escapes do not decode: Express's router's (below), and the API's own routing's. */
export const malformedPath = () =>
  new HttpProblem('malformed-path', 'The path has a malformed %-escape, or one that is not UTF-8.');

/** Express's router could not decode a path parameter (`/problems/%%`): the client's error, a 400 (its own status). */
function isMalformedPathEscape(error: unknown): boolean {
  return error instanceof URIError && (error as URIError & { status?: number }).status === 400;
}

/** The 503 for a fault of the database: its kind is the problem's type, Retry-After says when to try again. */
export function unavailable({ kind, retryAfterSeconds }: DatabaseUnavailable): HttpProblem {
  return new HttpProblem(kind, FAULTS[kind].detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
}

export function notFoundOutsideApi(routes: RouteTable, basePath: string): RequestHandler {
  return (req) => {
    throw new HttpProblem('not-found', `There is no resource at ${req.path}.${pathHint(routes, basePath, req.path)}`);
  };
}
