// What an authenticated key may do: its expiry (401) and address ranges (403), checked as the key is accepted,
// and the scope each operation declares in the spec (403), enforced by express-openapi-validator's documented
// `validateSecurity.handlers`, so that the rule and the docs are one text. Every fact comes with the cached key
// (server/accounts/keys.ts): no check reads the database.
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { middleware as openApiValidator } from 'express-openapi-validator';
import { addressAllowed, expired, missingScopes } from '../accounts/key-policy.js';
import type { Account } from '../accounts/keys.js';
import type { ApiSpec } from '../spec-model.js';
import { type KeyAcceptance, unauthorized } from './auth.js';
import { HttpProblem } from './problem.js';
import { context } from './request-context.js';
import type { Route, RouteTable } from './routes.js';

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
  if (!addressAllowed(policy, req.ip)) {
    throw new HttpProblem(
      403,
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
    403,
    'insufficient-scope',
    `This API key lacks the scope ${missing.join(' and ')}, which ${operation} needs. ` +
      `Its scopes: ${held && held.size > 0 ? [...held].sort().join(', ') : 'none'}.`,
    { headers: { 'X-Accepted-Scopes': declared.join(', ') } },
  );
}

/** express-openapi-validator's handler for the spec's `bearerAuth`: it gets the scopes the operation declares. */
function bearerAuth(req: Request, scopes: string[]): boolean {
  const account = context(req.res as Response).account;
  // The key step (auth.ts) ran before; an unauthenticated request here is a fault of the route's chain.
  if (!account) throw new Error('request reached the scope check unauthenticated');
  const problem = insufficientScope(account, scopes, req);
  if (!problem) return true;
  // For the step after the validator, which passes on an error of its own.
  context(req.res as Response).refusal = problem;
  throw Object.assign(new Error(problem.detail), { status: 403 });
}

/** The validator passes its own HttpError on; the problem the handler made is the one the client gets. */
const ourRefusal: ErrorRequestHandler = (error, _req, res, next) => {
  next(context(res).refusal ?? error);
};

/**
 * The scope check of each path: the validator with only `validateSecurity` on, so that it can run before the body
 * is read (a key that may not write learns that before its body is judged); the request validation after the body
 * is another instance (request-validation.ts). As there, each path's validator is given that path of the spec
 * only, so that it finds a request's operation without trying every path.
 */
export function prepareScopeCheck(
  spec: ApiSpec,
  routes: RouteTable,
): (route: Route) => Array<RequestHandler | ErrorRequestHandler> {
  const byPath = new Map(
    routes.paths.map(({ template }) => [
      template,
      openApiValidator({
        apiSpec: spec.pathDocument(template) as never,
        // As request-validation.ts's: any spec but the committed one is checked against the OpenAPI schema.
        validateApiSpec: !spec.bundled,
        validateRequests: false,
        validateResponses: false,
        // It judges no value (request-validation.ts does, with the resources' formats): no format to know or warn of.
        validateFormats: false,
        validateSecurity: { handlers: { bearerAuth } },
      }) as RequestHandler[],
    ]),
  );
  return (route) => {
    const validator = byPath.get(route.template);
    if (!validator) throw new Error(`no scope check for ${route.template}`);
    return [...validator, ourRefusal];
  };
}
