// The request as the steps before a handler learn it: one typed value per operation's chain, made by its first
// step and handed from step to step (each step's input and output are in its signature, composed in order by
// `chain`), until dispatch hands the validated request to the handler; and the few facts the log line, the
// metrics, the trace and the error handler record of any request, under /api/v1 or not (`context`).
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import type { Account } from '../../accounts/keys.js';
import type { Actor, ExpectedVersions } from '../../db/owned.js';
import type { Route } from './routes.js';

/** What the request's log line, metrics, span and problem record of it: facts learnt by then, if at all. */
export interface RequestContext {
  requestId: string;
  /** The operation, for a request its route served (a 404 has none). */
  route?: Route;
  /** The account, for a request whose key was accepted. */
  account?: Account;
  /** The kind of problem the answer is (http/problems/errors.ts), for the request's span. */
  problemKind?: string;
}

export const context = (res: Response): RequestContext => res.locals as RequestContext;

/** An operation's request once routed: its route, path parameters and query string as sent (read once). */
export interface RoutedRequest {
  route: Route;
  requestId: string;
  /** Path parameters as sent (text). */
  path: Record<string, string>;
  /** The query string's parameters as sent (text), parsed once. */
  sent: Record<string, string>;
}

/** A routed request whose key was accepted. */
export interface KeyedRequest extends RoutedRequest {
  account: Account;
}

/**
 * The request a handler receives: every value read once and checked against the spec (path and query as the
 * validator typed them, the spec's defaults filled in; the list cursor opened; If-Match read into the versions
 * it accepts), with who sent it. dispatch hands it to the operation's handler, typed per operation
 * (routing/operations.ts).
 */
export interface ValidatedRequest {
  route: Route;
  account: Account;
  requestId: string;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  /** The header parameters the spec names (If-Match, Idempotency-Key, …), as sent. */
  headers: Record<string, string | undefined>;
  /** The versions If-Match accepts (`any` without it), for an operation that takes If-Match. */
  expected?: ExpectedVersions;
  body: unknown;
  /** The request's path and the query parameters it sent, for links; `seal` for the cursors in them (lists). */
  url: { path: string; sent: Record<string, string>; seal?: (cursor: string) => string };
  actor: Actor;
}

/** A step of an operation's chain: given the request so far, it refuses (throws) or returns it with what it adds. */
export type Step<In, Out> = (req: Request, res: Response, known: In) => Out | Promise<Out>;

/** A step that reads an error a library step passed on, with the request so far. */
export type ErrorStep<In> = (
  error: unknown,
  req: Request,
  res: Response,
  known: In,
  next: (error?: unknown) => void,
) => void;

/** Where the chain keeps the request between two of its Express layers. */
const KNOWN = Symbol('the request so far');
type Kept = { [KNOWN]?: unknown };

/** Adds `added` to the request so far (the same object: no copy per step), typed with it. */
export function extend<S extends object, A extends object>(known: S, added: A): S & A {
  return Object.assign(known, added);
}

/**
 * An operation's chain of Express layers, built in the order they run: `step` adds a step of ours that takes the
 * request so far and returns it extended, `use` a library's middleware, which reads the Express request and leaves
 * ours as it is, `onError` an error handler. The types carry what each step needs from the ones before it, so that
 * no step asks at run time whether an earlier one ran: the layers run in order (layers.ts), and a layer of ours
 * calls the next only once it has kept what it returned.
 */
export class Chain<S> {
  private constructor(readonly layers: Array<RequestHandler | ErrorRequestHandler>) {}

  /** The first layer: it makes the request from the Express request. */
  static start<S>(first: (req: Request, res: Response) => S): Chain<S> {
    return new Chain<S>([
      (req: Request, res: Response, next: (error?: unknown) => void) => {
        (res.locals as Kept)[KNOWN] = first(req, res);
        next();
      },
    ]);
  }

  step<T>(step: Step<S, T>): Chain<T> {
    const layer = (req: Request, res: Response, next: (error?: unknown) => void) => {
      const locals = res.locals as Kept;
      const out = step(req, res, locals[KNOWN] as S);
      if (!(out instanceof Promise)) {
        locals[KNOWN] = out;
        return next();
      }
      return out.then((value) => {
        locals[KNOWN] = value;
        next();
      }, next);
    };
    return new Chain<T>([...this.layers, layer]);
  }

  use(...middleware: RequestHandler[]): Chain<S> {
    return new Chain<S>([...this.layers, ...middleware]);
  }

  onError(handler: ErrorStep<S>): Chain<S> {
    const layer: ErrorRequestHandler = (error, req, res, next) =>
      handler(error, req, res, (res.locals as Kept)[KNOWN] as S, next);
    return new Chain<S>([...this.layers, layer]);
  }

  /** The last layer: it answers the request. */
  end(last: (req: Request, res: Response, known: S) => Promise<void>): Array<RequestHandler | ErrorRequestHandler> {
    return [...this.layers, (req: Request, res: Response) => last(req, res, (res.locals as Kept)[KNOWN] as S)];
  }
}
