// Per-request state kept in res.locals, typed in one place: the request id, the operation routing matched
// (with its path parameters as sent) and the account the key belongs to.
import type { Response } from 'express';
import type { Account } from '../accounts/keys.js';
import type { Route } from '../spec.js';

export interface RequestContext {
  requestId: string;
  account?: Account;
  route?: Route;
  pathParams?: Record<string, string>;
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;
