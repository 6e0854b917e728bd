// Per-request state kept in res.locals, typed in one place.
import type { Response } from 'express';
import type { Account } from '../accounts/keys.js';
import type { Route } from '../spec.js';
import type { FieldError } from './problem.js';

export interface RequestContext {
  requestId: string;
  account?: Account;
  route?: Route;
  pathParams?: Record<string, string>;
  /** The query parameters as the client sent them (the validator later fills in defaults in req.query). */
  sentQuery?: Record<string, string>;
  /**
   * Findings of routing (unknown query parameters, integers not written in plain decimal), reported together
   * with the validator's.
   */
  pendingErrors?: FieldError[];
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;
