// Per-request state, kept in res.locals and typed in one place: every step after the one that learns a thing
// reads it from here (the request itself is left as it arrived, but for what the validator coerces).
import type { Response } from 'express';
import type { Account } from '../../accounts/keys.js';
import type { FieldError } from '../problems/problem.js';
import type { Route } from './routes.js';

export interface RequestContext {
  requestId: string;
  /** The operation the route serves, with its path parameters and query parameters as sent (text). */
  route?: Route;
  pathParams?: Record<string, string>;
  sentQuery?: Record<string, string>;
  /** The account the key belongs to. */
  account?: Account;
  /** What our own checks found, until the validator has had its say (request-validation.ts). */
  findings?: FieldError[];
  /** The list cursor the request sent, opened by the validation step that checked it. */
  openedCursor?: string;
  /** The kind of problem the answer is (http/problems/errors.ts), for the request's span. */
  problemKind?: string;
  /** Set once the request passed validation: a handler only ever runs on a validated request. */
  validated?: boolean;
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;
