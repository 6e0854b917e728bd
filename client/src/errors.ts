// The errors the helpers throw: one base class, and one subclass per way a call can fail, so callers can branch
// with instanceof. An abort by the caller's own signal is not among them: it rejects with the signal's reason.
import type { FieldError, Problem } from './types.js';

/** Base class of every error the client throws itself. */
export class DomainSpaceError extends Error {
  override name = 'DomainSpaceError';
}

/** The API answered with a status outside 2xx. */
export class ApiError extends DomainSpaceError {
  override name = 'ApiError';
  readonly status: number;
  /** The problem type URI; `about:blank` when the body was not a problem document. */
  readonly type: string;
  readonly title: string;
  readonly detail: string | undefined;
  /** Each bad field of a 422 (empty otherwise). */
  readonly errors: FieldError[];
  /** The id to quote to support: the body's `request_id`, else the `X-Request-Id` header. */
  readonly requestId: string | undefined;
  /** The problem document, when the body was one (a proxy's HTML error page is not). */
  readonly problem: Problem | undefined;
  /** The body as received: the parsed JSON, or the text of a non-JSON body. */
  readonly body: unknown;
  readonly headers: Headers;
  /** Seconds the server asked to wait (`Retry-After`), when it sent one. */
  readonly retryAfter: number | undefined;

  constructor(response: Response, body: unknown) {
    const problem = isProblem(body) ? body : undefined;
    const title = problem?.title ?? (response.statusText || 'HTTP error');
    const detail = problem?.detail ?? textDetail(body);
    const errors = problem?.errors ?? [];
    const requestId = problem?.request_id ?? response.headers.get('X-Request-Id') ?? undefined;
    super(describe(response.status, title, detail, errors, requestId));
    this.status = response.status;
    this.type = problem?.type ?? 'about:blank';
    this.title = title;
    this.detail = detail;
    this.errors = errors;
    this.requestId = requestId;
    this.problem = problem;
    this.body = body;
    this.headers = response.headers;
    const wait = retryAfterMs(response.headers.get('Retry-After'));
    this.retryAfter = wait === undefined ? undefined : Math.ceil(wait / 1000);
  }
}

/** The request never got an answer: connection refused or reset, DNS failure, CORS refusal in a browser. */
export class NetworkError extends DomainSpaceError {
  override name = 'NetworkError';
  constructor(cause: unknown) {
    super(`The request failed before an answer arrived: ${messageOf(cause)}`, { cause });
  }
}

/** The call (every attempt and the waits between them) took longer than `timeoutMs`. */
export class TimeoutError extends DomainSpaceError {
  override name = 'TimeoutError';
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(`The request took longer than ${timeoutMs} ms`);
    this.timeoutMs = timeoutMs;
  }
}

/** True for what an aborted fetch rejects with by default (a DOMException named AbortError). */
export function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'AbortError';
}

/** Milliseconds from now that a `Retry-After` value (delay-seconds or HTTP date) asks for; undefined if unusable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function isProblem(body: unknown): body is Problem {
  if (typeof body !== 'object' || body === null) return false;
  const candidate = body as Partial<Problem>;
  return typeof candidate.status === 'number' && typeof candidate.title === 'string';
}

function textDetail(body: unknown): string | undefined {
  if (typeof body !== 'string') return undefined;
  const text = body.trim();
  // An HTML error page (a proxy's 502) says nothing useful in a message; the body is still on `body`.
  if (!text || text.startsWith('<')) return undefined;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function describe(
  status: number,
  title: string,
  detail: string | undefined,
  errors: FieldError[],
  requestId: string | undefined,
): string {
  let message = `${status} ${title}`;
  if (detail) message += `: ${detail}`;
  if (errors.length > 0) message += ` (${errors.map((e) => `${e.field}: ${e.message}`).join('; ')})`;
  if (requestId) message += ` [request id ${requestId}]`;
  return message;
}

function messageOf(cause: unknown): string {
  if (cause instanceof Error) {
    // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, …) is on its cause.
    const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
    return `${cause.message}${inner}`;
  }
  return String(cause);
}
