// The compile-time contract: every operation of the spec has a handler typed from generated/api.ts, so a
// missing operation, a wrong parameter or a reply of the wrong shape does not compile. dispatch
// (http/api/dispatch.ts) hands the handler of the matched operation the validated request (request-context.ts),
// typed here per operation.
import type { operations } from '../../../generated/api.js';
import type { Account } from '../../accounts/keys.js';
import type { Actor, ExpectedVersions } from '../../db/owned.js';
import type { ValidatedRequest } from './request-context.js';
import type { Route } from './routes.js';

/**
 * The operations that have handlers: a `*_head` operation is its GET served without the body (spec-model.ts),
 * and a `webhooks_*` one is a request this service sends (the spec's `webhooks`), not one it serves.
 */
export type OperationId = Exclude<keyof operations, `${string}_head` | `webhooks_${string}`>;
type Responses<K extends OperationId> = operations[K]['responses'];
type SuccessStatus<K extends OperationId> = Extract<keyof Responses<K>, 200 | 201 | 202 | 204 | 304>;

type ReplyFor<R, S> = (R extends { content: { 'application/json': infer B } }
  ? { status: S; body: B }
  : { status: S; body?: undefined }) &
  (R extends { headers: { Location: unknown } } ? { location: string } : { location?: undefined }) &
  (R extends { headers: { ETag: unknown } } ? { etag: string } : { etag?: undefined });

/**
 * What a handler answers: one of the operation's success (or 304) statuses with its documented body and headers;
 * `savedBody`, what an idempotent replay answers instead of `body` (a secret shown once is not kept for it).
 */
export type Reply<K extends OperationId> = {
  [S in SuccessStatus<K>]: ReplyFor<Responses<K>[S], S>;
}[SuccessStatus<K>] & {
  savedBody?: unknown;
};

type Present<T> = [NonNullable<T>] extends [never] ? Record<string, never> : NonNullable<T>;
type JsonBody<T> = NonNullable<T> extends { content: { 'application/json': infer B } } ? B : Record<string, never>;
type Query<K extends OperationId> = Present<operations[K]['parameters']['query']>;
type Headers<K extends OperationId> = Present<operations[K]['parameters']['header']>;

/** Seals a list cursor for a link (http/conventions/cursor.ts), with the key at hand. */
type Seal = (cursor: string) => string;

export type HandlerInput<K extends OperationId> = {
  account: Account;
  /** Path parameters, typed as the spec says. */
  path: Required<Present<operations[K]['parameters']['path']>>;
  /** Query parameters with the spec's defaults filled in; a list's `after` as opened (the cursor inside). */
  query: Required<Query<K>>;
  /** The header parameters the spec names (If-Match, Idempotency-Key, …), as sent. */
  headers: Headers<K>;
  /** The validated body (form or JSON, read into the same shape); `{}` when none was sent. */
  body: JsonBody<operations[K]['requestBody']>;
  /**
   * Path of the request and the query parameters it actually sent, for building links; for a list that walks by
   * cursor, the seal of the cursors its links carry.
   */
  url: { path: string; sent: Record<string, string> } & ('after' extends keyof Query<K> ? { seal: Seal } : unknown);
  /** The request's X-Request-Id, which the event log records with each change. */
  requestId: string;
  /** Who sent the request (its key, client address and User-Agent), which the event log records too. */
  actor: Actor;
} /** The versions of the record If-Match accepts, read once (`any` without the header or for `*`). */ & ('If-Match' extends keyof Headers<K>
  ? { expected: ExpectedVersions }
  : unknown);

export type Handler<K extends OperationId> = (input: HandlerInput<K>) => Promise<Reply<K>>;
export type Handlers = { [K in OperationId]: Handler<K> };

/** A reply of any operation, as dispatch writes it; `headers` carries what the idempotency layer adds. */
export interface UntypedReply {
  status: number;
  body?: unknown;
  savedBody?: unknown;
  location?: string;
  etag?: string;
  headers?: Record<string, string>;
}

/** The input of any operation's handler: the validated request, as dispatch hands it over. */
export type UntypedInput = ValidatedRequest;

/**
 * How dispatch runs the handler: directly by default; the idempotency layer (server/idempotency) runs a create
 * that carries an Idempotency-Key inside its own transaction, with handlers made for that transaction.
 */
export type Runner = (
  request: { route: Route; input: UntypedInput; requestId: string },
  /** Runs the operation's handler, from `handlers` when given (e.g. bound to a transaction), else dispatch's own. */
  handle: (handlers?: Handlers) => Promise<UntypedReply>,
) => Promise<UntypedReply>;
