// Length limits on what a request carries, checked before any pattern or parser reads it: a value past its
// limit is refused whole, so no step after this one ever sees more than a small, fixed amount of input.
// (Node refuses request headers over 16 KiB in all with 431 before the app runs; bodies are bounded in body.ts.)
import type { IncomingMessage } from 'node:http';
import { HttpProblem } from '../problems/problem.js';
import type { RequestStep } from './every-request.js';

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

const LIMITS = Object.entries(HEADER_LIMITS);

export const boundInputs: RequestStep = (req) => {
  if (req.originalUrl.length > MAX_REQUEST_TARGET) {
    throw new HttpProblem(
      'request-target-too-long',
      `The request target (path and query) is ${req.originalUrl.length} characters; the limit is ${MAX_REQUEST_TARGET}.`,
    );
  }
  for (const [name, limit] of LIMITS) {
    const length = headerLength(req.headers[name]);
    if (length > limit) {
      throw new HttpProblem('header-too-large', `The ${name} header is ${length} characters; the limit is ${limit}.`);
    }
  }
};

/** All of a header's values together (Node joins most repeated headers; a few it keeps as a list). */
function headerLength(value: string | string[] | undefined): number {
  if (value === undefined) return 0;
  return typeof value === 'string' ? value.length : value.reduce((sum, each) => sum + each.length + 2, 0);
}

/**
 * How many times a header was sent: Node joins repeated headers into one value or keeps the first, and a request
 * that repeats one the service must read once is refused. Counted in `rawHeaders` (names as sent) without
 * building Node's `headersDistinct` for every header of the request.
 */
export function timesSent(req: IncomingMessage, lowercaseName: string): number {
  let count = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as string;
    if (name.length === lowercaseName.length && name.toLowerCase() === lowercaseName) count++;
  }
  return count;
}
