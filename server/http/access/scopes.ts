// What an authenticated key may do: its expiry (401) and address ranges (403), checked as the key is accepted,
// and the scope each operation declares in the spec (403), enforced by express-openapi-validator's documented
// `validateSecurity.handlers` (request-validation.ts configures it), so that the rule and the docs are one text.
// Every fact comes with the cached key (server/accounts/keys.ts): no check reads the database.
import type { ErrorRequestHandler, Request, Response } from 'express';
import { addressAllowed, expired, missingScopes } from '../../accounts/key-policy.js';
import type { Account } from '../../accounts/keys.js';
import { HttpProblem } from '../problems/problem.js';
import { context } from '../routing/request-context.js';
import { type KeyAcceptance, unauthorized } from './auth.js';

/** 401 for a key past its expiry (or its rotation's overlap), 403 for one used from outside its ranges. */
export const refuseByPolicy: KeyAcceptance = (account, req) => {
  const policy = account.policy;
  if (expired(policy) && policy?.expiresAt !== undefined) {
    const when = new Date(policy.expiresAt).toISOString();
    throw unauthorized(
      policy.replacedBy
        ? `The API key was replaced by key ${policy.replacedBy}, and its overlap ended at ${when}. Use the new key.`
        : `The API key expired at ${when}. Ask for a new one.`,
      true,
      'key-expired',
    );
  }
  // req.ip is worked out anew on each read (Express's trust proxy): only for a key that has ranges.
  if (policy?.allowedIps && !addressAllowed(policy, req.ip)) {
    throw new HttpProblem(
      'address-not-allowed',
      `This API key may not be used from ${req.ip ?? 'an unknown address'}: the address is outside the ranges it was issued for.`,
    );
  }
};

/** The 403 for a key without a scope the operation declares; `X-Accepted-Scopes` names what would do. */
export function insufficientScope(
  account: Account,
  declared: readonly string[],
  req: Request,
): HttpProblem | undefined {
  const missing = missingScopes(account.policy, declared);
  if (missing.length === 0) return undefined;
  const held = account.policy?.scopes;
  const operation = `${req.method} ${context(req.res as Response).route?.template ?? req.path}`;
  return new HttpProblem(
    'insufficient-scope',
    `This API key lacks the scope ${missing.join(' and ')}, which ${operation} needs. ` +
      `Its scopes: ${held && held.size > 0 ? [...held].sort().join(', ') : 'none'}.`,
    { headers: { 'X-Accepted-Scopes': declared.join(', ') } },
  );
}

/**
 * express-openapi-validator's handler for the spec's `bearerAuth` (its documented `validateSecurity.handlers`): it
 * gets the scopes the operation declares. The validator runs it before it judges the request (request-validation.ts).
 */
export function bearerAuth(req: Request, scopes: string[]): boolean {
  const account = context(req.res as Response).account;
  // The key step (auth.ts) ran before; an unauthenticated request here is a fault of the route's chain.
  if (!account) throw new Error('request reached the scope check unauthenticated');
  const problem = insufficientScope(account, scopes, req);
  if (!problem) return true;
  // For the step after the validator, which passes on an error of its own.
  context(req.res as Response).refusal = problem;
  throw Object.assign(new Error(problem.detail), { status: 403 });
}

/** The validator passes its own HttpError on; the problem bearerAuth made is the one the client gets. */
export const ourRefusal: ErrorRequestHandler = (error, _req, res, next) => {
  next(context(res).refusal ?? error);
};
