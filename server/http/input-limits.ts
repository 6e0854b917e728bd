// Length limits on what a request carries, checked before any pattern or parser reads it: a value past its
// limit is refused whole, so no step after this one ever sees more than a small, fixed amount of input.
// (Node refuses request headers over 16 KiB in all with 431 before the app runs; bodies are bounded in body.ts.)
import type { RequestHandler } from 'express';
import { HttpProblem } from './problem.js';

/** The request target (path and query): longer is a 414. */
export const MAX_REQUEST_TARGET = 8 * 1024;

/** The Authorization header (an API key is 60 characters): longer is a 401, in auth.ts. */
export const MAX_AUTHORIZATION = 512;

/** The headers the service reads, and the most characters each may have: longer is a 431 naming it. */
export const HEADER_LIMITS: Readonly<Record<string, number>> = {
  accept: 1024,
  'accept-encoding': 1024,
  'content-type': 256,
  'if-match': 4096,
  'if-none-match': 4096,
  'idempotency-key': 1024,
  host: 1024,
  origin: 1024,
  'access-control-request-method': 64,
  'x-forwarded-for': 1024,
  'x-forwarded-host': 1024,
  'x-forwarded-proto': 64,
};

export const boundInputs: RequestHandler = (req, _res, next) => {
  if (req.originalUrl.length > MAX_REQUEST_TARGET) {
    throw new HttpProblem(
      414,
      'request-target-too-long',
      `The request target (path and query) is ${req.originalUrl.length} characters; the limit is ${MAX_REQUEST_TARGET}.`,
    );
  }
  for (const [name, limit] of Object.entries(HEADER_LIMITS)) {
    const length = headerLength(req.headers[name]);
    if (length > limit) {
      throw new HttpProblem(
        431,
        'header-too-large',
        `The ${name} header is ${length} characters; the limit is ${limit}.`,
      );
    }
  }
  next();
};

/** All of a header's values together (Node joins most repeated headers; a few it keeps as a list). */
function headerLength(value: string | string[] | undefined): number {
  if (value === undefined) return 0;
  return typeof value === 'string' ? value.length : value.reduce((sum, each) => sum + each.length + 2, 0);
}
