// Bearer authentication for every /api/v1 request, before any detail of the request is looked at.
import type { RequestHandler } from 'express';
import { authenticate } from '../accounts/keys.js';
import type { Database } from '../db/database.js';
import { HttpProblem } from './problem.js';
import { context } from './request-context.js';

const REALM = 'domain-space-service';
// RFC 6750 b64token; the scheme name is case-insensitive.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

function unauthorized(detail: string, invalidToken: boolean): HttpProblem {
  const challenge = invalidToken ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
  return new HttpProblem(401, 'unauthorized', detail, { headers: { 'WWW-Authenticate': challenge } });
}

export function requireApiKey(db: Database): RequestHandler {
  return async (req, res, next) => {
    const header = req.get('authorization');
    if (header === undefined || header.trim() === '') {
      throw unauthorized('Send an API key as "Authorization: Bearer <key>".', false);
    }
    const token = BEARER.exec(header)?.[1];
    if (!token) throw unauthorized('The Authorization header must be "Bearer <key>".', true);
    const account = await authenticate(db, token);
    if (!account) throw unauthorized('The API key is not valid: it is malformed, unknown or revoked.', true);
    context(res).account = account;
    next();
  };
}
