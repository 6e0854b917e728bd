// The one error handler: whatever was thrown becomes application/problem+json with the request id.
// Client errors say what to fix; server errors say nothing of internals and are logged in full instead.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { FieldFormat } from '../formats.js';
import type { Logger } from '../logger.js';
import type { ApiSpec } from '../spec.js';
import { BODY_LIMIT_BYTES, FORM, JSON_TYPE } from './body.js';
import { pathHint } from './path-hints.js';
import { HttpProblem, PROBLEM_TYPE_BASE, problemBody, validationProblem } from './problem.js';
import { context } from './request-context.js';
import { fieldErrorsOf, isValidatorError } from './validation.js';

// body-parser's error types, by what they mean for the client.
const BODY_ERRORS: Record<string, () => HttpProblem> = {
  'entity.parse.failed': () => new HttpProblem(400, 'malformed-body', 'The request body is not valid JSON.'),
  'request.aborted': () => new HttpProblem(400, 'malformed-body', 'The request body was cut short.'),
  'request.size.invalid': () =>
    new HttpProblem(400, 'malformed-body', 'The request body is shorter or longer than its Content-Length.'),
  'entity.too.large': () =>
    new HttpProblem(413, 'content-too-large', `The request body is larger than ${BODY_LIMIT_BYTES} bytes.`),
  'parameters.too.many': () => new HttpProblem(413, 'content-too-large', 'The form has too many fields.'),
  'charset.unsupported': () => new HttpProblem(415, 'unsupported-media-type', 'The body must be encoded in UTF-8.'),
  'form.encoding.invalid': () =>
    new HttpProblem(400, 'malformed-body', 'The form body has a malformed %-escape, or one that is not UTF-8.'),
  'encoding.unsupported': () =>
    new HttpProblem(415, 'unsupported-media-type', 'The Content-Encoding of the body is not supported.'),
};

function toProblem(
  error: unknown,
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  ctx: ReturnType<typeof context>,
  body?: unknown,
): HttpProblem | undefined {
  if (error instanceof HttpProblem) return error;
  const bodyError = BODY_ERRORS[(error as { type?: string } | null)?.type ?? ''];
  if (bodyError) return bodyError();
  if (isValidatorError(error) && error.status === 400) {
    const pending = ctx.pendingErrors ?? [];
    const said = new Set(pending.map((e) => `${e.location}:${e.field}`));
    const sent = { body, query: ctx.sentQuery, path: ctx.pathParams };
    const found = fieldErrorsOf(error, spec, ctx.route, formats, sent).filter(
      (e) =>
        !said.has(`${e.location}:${e.field}`) &&
        !(e.field === '(path)' && pending.length > 0) &&
        // The validator reads "search[]=x" as the array "search"; the client sent no "search" to blame.
        !(e.location === 'query' && !Object.hasOwn(ctx.sentQuery ?? {}, e.field)),
    );
    return validationProblem([...pending, ...found]);
  }
  if (isValidatorError(error) && error.status === 415) {
    return new HttpProblem(415, 'unsupported-media-type', `Send ${FORM} or ${JSON_TYPE}.`);
  }
  return undefined;
}

const INTERNAL_DETAIL = 'Something went wrong on our side. Quote the request id to support.';
const INTERNAL_BODY = (requestId: string) => ({
  type: `${PROBLEM_TYPE_BASE}internal`,
  title: 'Internal Server Error',
  status: 500,
  detail: INTERNAL_DETAIL,
  request_id: requestId,
});

export function problemHandler(
  spec: ApiSpec,
  formats: Record<string, FieldFormat>,
  logger: Logger,
): ErrorRequestHandler {
  return (error, req, res, next) => {
    const ctx = context(res);
    const problem = toProblem(error, spec, formats, ctx, req.body) ?? new HttpProblem(500, 'internal', INTERNAL_DETAIL);
    if (problem.status >= 500) {
      logger.error('request failed', {
        request_id: ctx.requestId,
        method: req.method,
        path: req.path,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        details: isValidatorError(error) ? error.errors : undefined,
      });
    }
    if (res.headersSent) return next(error);
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

/** Findings of routing, reported on their own when the validator found nothing else. */
export const reportPendingErrors: RequestHandler = (_req, res, next) => {
  const errors = context(res).pendingErrors ?? [];
  if (errors.length > 0) throw validationProblem(errors);
  next();
};

export function notFoundOutsideApi(spec: ApiSpec): RequestHandler {
  return (req) => {
    throw new HttpProblem(404, 'not-found', `There is no resource at ${req.path}.${pathHint(spec, req.path)}`);
  };
}
