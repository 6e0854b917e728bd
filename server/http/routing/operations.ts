// The compile-time contract: every operation of the spec has a handler typed from generated/api.ts, so a
// missing operation, a wrong parameter or a reply of the wrong shape does not compile. `dispatch` runs the
// handler of the matched operation with the parameters as validation left them (typed, defaults filled in).
import type { RequestHandler } from 'express';
import type { operations } from '../../../generated/api.js';
import type { Account } from '../../accounts/keys.js';
import type { Actor } from '../../db/owned.js';
import type { CursorSeal } from '../conventions/cursor.js';
import { requestActor } from './request-cause.js';
import { context } from './request-context.js';
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

export interface HandlerInput<K extends OperationId> {
  account: Account;
  /** Path parameters, typed as the spec says. */
  path: Required<Present<operations[K]['parameters']['path']>>;
  /** Query parameters with the spec's defaults filled in. */
  query: Required<Present<operations[K]['parameters']['query']>>;
  /** The header parameters the spec names (If-Match, Idempotency-Key, …), as sent. */
  headers: Present<operations[K]['parameters']['header']>;
  /** The validated body (form or JSON, read into the same shape); `{}` when none was sent. */
  body: JsonBody<operations[K]['requestBody']>;
  /** Path of the request and the query parameters it actually sent, for building links. */
  url: { path: string; sent: Record<string, string> };
  /** The request's X-Request-Id, which the event log records with each change. */
  requestId: string;
  /** Who sent the request (its key, client address and User-Agent), which the event log records too. */
  actor: Actor;
}

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

/** The input of any operation's handler, as dispatch builds it. */
export type UntypedInput = HandlerInput<OperationId> & { headers: Record<string, string | undefined> };

type UntypedHandler = (input: UntypedInput) => Promise<UntypedReply>;

/**
 * How dispatch runs the handler: directly by default; the idempotency layer (server/idempotency) runs a create
 * that carries an Idempotency-Key inside its own transaction, with handlers made for that transaction.
 */
export type Runner = (
  request: { route: Route; input: UntypedInput; requestId: string },
  /** Runs the operation's handler, from `handlers` when given (e.g. bound to a transaction), else dispatch's own. */
  handle: (handlers?: Handlers) => Promise<UntypedReply>,
) => Promise<UntypedReply>;

/**
 * Runs the handler of the operation routing found. Runs after validation, so values have their types. A list's
 * cursor, opened by the validation step, is handed over as it is inside, and sealed in links.next after
 * (http/conventions/cursor.ts): handlers and pagination work with cursors as they are, and no answer carries one
 * unsealed.
 */
export function dispatch(
  handlers: Handlers,
  run: Runner = (_request, handle) => handle(),
  cursors?: CursorSeal,
): RequestHandler {
  return async (req, res) => {
    const { route, account, requestId, validated, sentQuery = {}, openedCursor } = context(res);
    // Defence in depth: a handler only ever sees a request that validation has checked (and typed).
    if (!route || !account || !validated) throw new Error('request reached dispatch unrouted or unvalidated');
    // Path and query values as the validator coerced them (numbers, defaults filled in).
    const query = valuesOf(route.queryNames, req.query);
    if (openedCursor !== undefined) query.after = openedCursor;
    const headers: Record<string, unknown> = {};
    for (const { name, lowercase } of route.headerNames) headers[name] = req.headers[lowercase];
    const input = {
      account,
      path: valuesOf(route.pathNames, req.params),
      query,
      headers,
      body: req.body ?? {},
      url: { path: `${req.baseUrl}${req.path}`, sent: sentQuery },
      requestId,
      actor: requestActor(account, req),
    } as UntypedInput;
    // The spec matched the operation at run time; its input and reply were checked per operation at compile time.
    const operationId = route.operation.id as OperationId;
    const reply = await run({ route, input, requestId }, (on = handlers) =>
      (on[operationId] as unknown as UntypedHandler)(input),
    );
    if (cursors && hasNextLink(reply.body)) await sealNextLink(reply.body, cursors);
    if (reply.headers) res.set(reply.headers);
    if (reply.location) res.location(reply.location);
    if (reply.etag) res.set('ETag', reply.etag);
    res.status(reply.status);
    if (reply.body === undefined) res.end();
    else res.json(reply.body);
  };
}

/** The named values of `from`, in one object (those not sent as undefined). */
function valuesOf(names: string[], from: Record<string, unknown>): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const name of names) values[name] = from[name];
  return values;
}

type Linked = { links: { next: string } };

function hasNextLink(body: unknown): body is Linked {
  return typeof (body as Partial<Linked> | undefined)?.links?.next === 'string';
}

/** The cursor in a list's links.next, sealed. */
async function sealNextLink(body: Linked, cursors: CursorSeal): Promise<void> {
  const { links } = body;
  const [found, name, cursor] = /([?&]after=)([A-Za-z0-9_-]+)/.exec(links.next) ?? [];
  if (!found || !name || !cursor) return;
  links.next = links.next.replace(found, `${name}${await cursors.seal(cursor)}`);
}
