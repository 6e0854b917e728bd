// Bearer authentication for every /api/v1 request, before any detail of the request is looked at (a repeated
// Authorization header is refused first).
import type { Request, Response } from 'express';
import type { Account } from '../../accounts/keys.js';
import { MAX_AUTHORIZATION, timesSent } from '../pipeline/input-limits.js';
import { HttpProblem } from '../problems/problem.js';
import { context, extend, type KeyedRequest, type RoutedRequest, type Step } from '../routing/request-context.js';

const REALM = 'domain-space-service';
// RFC 6750 b64token; the scheme name is case-insensitive.
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

export function unauthorized(
  detail: string,
  invalidToken: boolean,
  kind: 'unauthorized' | 'key-expired' = 'unauthorized',
): HttpProblem {
  const challenge = invalidToken ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
  return new HttpProblem(kind, detail, { headers: { 'WWW-Authenticate': challenge } });
}

/** How a bearer token becomes an account (the API keys by default; the sandbox's own in sandbox.ts). */
export interface KeyCheck {
  /** `res` is the request's response, for a check that depends on how the request is answered (the sandbox's). */
  (token: string, res?: Response): Promise<Account | undefined>;
  /** The 401's detail for a token it refuses, when it has more to say than the default. */
  invalidDetail?: string;
}

/** `requireApiKey`'s last word on a key that authenticated (its expiry, its address ranges): throws to refuse it. */
export type KeyAcceptance = (account: Account, req: Request) => void;

/** The step of every operation's chain that makes a routed request one of an account (401), or refuses it. */
export function requireApiKey(
  authenticate: KeyCheck,
  accept: KeyAcceptance = () => {},
): Step<RoutedRequest, KeyedRequest> {
  return async (req, res, known) => {
    // Node keeps the first of several Authorization headers; which key was meant is anyone's guess.
    const sent = timesSent(req, 'authorization');
    if (sent > 1) {
      throw new HttpProblem('ambiguous-credentials', `Send one Authorization header; this request has ${sent}.`, {
        headers: { 'WWW-Authenticate': `Bearer realm="${REALM}", error="invalid_request"` },
      });
    }
    const header = req.get('authorization');
    if (header === undefined || header.trim() === '') {
      throw unauthorized('Send an API key as "Authorization: Bearer <key>".', false);
    }
    // Bounded before the pattern reads it: no key is anywhere near this long.
    if (header.length > MAX_AUTHORIZATION) {
      throw unauthorized(`The Authorization header is over ${MAX_AUTHORIZATION} characters; no API key is.`, true);
    }
    const token = BEARER.exec(header)?.[1];
    if (!token) throw unauthorized('The Authorization header must be "Bearer <key>".', true);
    const account = await authenticate(token, res);
    if (!account) {
      throw unauthorized(
        authenticate.invalidDetail ?? 'The API key is not valid: it is malformed, unknown or revoked.',
        true,
      );
    }
    accept(account, req);
    // The log line and the per-key quota name the account too.
    context(res).account = account;
    return extend(known, { account });
  };
}
