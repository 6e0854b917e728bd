import type { Operation } from '../../server/spec-model.js';
import type { Account, Context } from './context.js';
import { type Exchange, send } from './http.js';
import { encodeBody, encodeQuery, type Input, type WireBody } from './inputs.js';
import { OVERSIZED_BYTES, type WireFault } from './mutations.js';
import {
  checkRateLimitFields,
  MAX_RATE_LIMIT_RETRIES,
  MAX_RETRY_AFTER_SECONDS,
  retryAfterSeconds,
} from './rate-limit.js';

export interface RequestSpec {
  /** Path parameter values, sent percent-encoded. */
  ids?: Record<string, string>;
  /** A raw path segment for the (single) path parameter, sent exactly as given (odd ids). */
  rawId?: string;
  input?: Input;
  wire?: WireFault;
  /** Extra request headers (set last, so they win). */
  headers?: Record<string, string>;
  /** undefined: the primary account; null: no credentials; a string: that Authorization/API key value. */
  account?: Account | null;
  credential?: string | null;
  method?: string;
  /** A whole URL to send instead of the operation's path and the input's query (a `links.next`). */
  url?: string;
  /** Take a 429 as the answer instead of waiting out its Retry-After and sending the request again. */
  noRateLimitRetry?: boolean;
}

export function credentialHeaders(operation: Operation, value: string | null): Record<string, string> {
  if (value === null) return {};
  const scheme = operation.security.find((s) => s.kind !== 'unsupported') ?? operation.security[0];
  if (!scheme) return {};
  if (scheme.kind === 'header') return { [scheme.name]: value };
  return { Authorization: value };
}

/** The credential value an account sends for an operation (bearer: "Bearer <key>"). */
export function credentialOf(operation: Operation, account: Account): string {
  const scheme = operation.security.find((s) => s.kind !== 'unsupported');
  return scheme?.kind === 'bearer' ? `Bearer ${account.key}` : account.key;
}

function wireBody(input: Input | undefined, wire: WireFault | undefined): WireBody | undefined {
  if (wire === 'missing_body' || !input?.body) return undefined;
  const body = encodeBody(input.body.mediaType, input.body.value);
  if (wire === 'bad_content_type') return { contentType: 'text/plain', text: body.text };
  if (wire === 'malformed_body') return { ...body, text: `${body.text.slice(0, -1)},` };
  if (wire === 'oversized_body') return { ...body, text: body.text.padEnd(OVERSIZED_BYTES, ' ') };
  return body;
}

export function urlOf(ctx: Context, operation: Operation, spec: RequestSpec): string {
  if (spec.url !== undefined) return spec.url;
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) =>
    spec.rawId !== undefined ? spec.rawId : encodeURIComponent(spec.ids?.[name] ?? '1'),
  );
  return `${ctx.baseUrl}${path}${encodeQuery(spec.input?.query ?? {})}`;
}

/** The run was interrupted: no more checks are sent (the clean-up still is). */
export class Interrupted extends Error {}

export async function call(ctx: Context, operation: Operation, spec: RequestSpec = {}): Promise<Exchange> {
  if (ctx.signal?.aborted && !ctx.cleaning) throw new Interrupted('interrupted');
  const headers: Record<string, string> = {};
  let credential: string | null | undefined;
  if (operation.security.length > 0) {
    credential =
      spec.credential !== undefined
        ? spec.credential
        : spec.account === null
          ? null
          : credentialOf(operation, spec.account ?? ctx.primary);
    Object.assign(headers, credentialHeaders(operation, credential));
  }
  const body = wireBody(spec.input, spec.wire);
  if (body?.contentType) headers['Content-Type'] = body.contentType;
  Object.assign(headers, spec.headers);
  const request = { method: spec.method ?? operation.method, url: urlOf(ctx, operation, spec), headers };
  for (let attempt = 0; ; attempt++) {
    const exchange = await send({ ...request, ...(body ? { body: body.text } : {}) });
    ctx.results.requests++;
    ctx.onExchange?.(exchange, operation.id);
    checkRateLimitFields(ctx, operation, exchange);
    const primary = credential === undefined || credential === credentialOf(operation, ctx.primary);
    // A credential probe (a missing or wrong key) meets the address's failed-authentication budget, not a key's.
    const probe = spec.credential !== undefined;
    if (primary && !probe && credential !== undefined) ctx.keyScopes.observe(operation, exchange);
    const { status } = exchange.reply;
    ctx.budget.observe(
      exchange,
      status === 401 || (probe && status === 429) ? 'failed-auth' : primary ? 'primary' : 'other',
    );
    // A key's rate limit is no failure of the request: wait as its Retry-After says, then send it again. The
    // address's failed-authentication budget is never waited out: the probe is given up instead.
    const wait = status === 429 && !probe ? retryAfterSeconds(exchange) : undefined;
    if (wait === undefined || wait > MAX_RETRY_AFTER_SECONDS || spec.noRateLimitRetry) return exchange;
    if (attempt >= MAX_RATE_LIMIT_RETRIES) return exchange;
    const detail = (exchange.reply.json as { detail?: unknown } | undefined)?.detail;
    ctx.log(
      `429 on ${request.method} ${request.url}${typeof detail === 'string' ? ` ("${detail}")` : ''}: waiting ${wait} s ` +
        '(Retry-After), then sending it again',
    );
    await new Promise((resolve) => setTimeout(resolve, wait * 1000 + 100));
  }
}
