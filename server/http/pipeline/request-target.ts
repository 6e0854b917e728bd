// The request target as HTTP/1.1 (RFC 9112 §3.2) allows it: an absolute-form target ("GET http://host/api/v1/spaces",
// what proxies send) is read as its path and query, like the usual origin-form ("GET /api/v1/spaces"); an
// HTTP/1.1 request without Host is a 400.

import { HttpProblem } from '../problems/problem.js';
import type { RequestStep } from './every-request.js';

const ABSOLUTE_FORM = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;

export const readRequestTarget: RequestStep = (req) => {
  if (req.httpVersion === '1.1' && req.headers.host === undefined) {
    throw new HttpProblem('malformed-request', 'An HTTP/1.1 request must carry a Host header.');
  }
  // Express's router reads an absolute-form req.url itself (it keeps the scheme and host aside); the
  // validator reads originalUrl as a path, so that one becomes the origin-form.
  const authority = ABSOLUTE_FORM.exec(req.originalUrl)?.[0];
  if (authority) {
    const target = req.originalUrl.slice(authority.length);
    req.originalUrl = target.startsWith('/') ? target : `/${target}`;
  }
};
