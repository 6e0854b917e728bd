// What every phase of a run shares: the spec model, the plan, the results, the accounts, and how to turn an
// operation plus an input into a request (ids in the path, query, body on the wire, credentials).
import type { Plan } from './cases.js';
import { type Exchange, type Secret, send } from './http.js';
import { encodeBody, encodeQuery, type Input, type WireBody } from './inputs.js';
import { OVERSIZED_BYTES, type WireFault } from './mutations.js';
import type { Results } from './results.js';
import type { Operation, Resource, SpecModel } from './spec-model.js';

export interface Account {
  key: string;
  /** Shell variable the key is shown as in curl lines. */
  variable: string;
}

export type Profile = 'auto' | 'server' | 'mock';

export interface Context {
  model: SpecModel;
  plan: Plan;
  results: Results;
  baseUrl: string;
  primary: Account;
  second?: Account;
  secrets: Secret[];
  profile: Profile;
  concurrency: number;
  /** Why the stateful checks are skipped, when they are. */
  stateless?: string;
  /** Records made by the run, deleted at its end. */
  created: Array<{ resource: Resource; id: string; account: Account }>;
  /** One record per resource, made at the start, that item operations are tried on. */
  fixtures: Map<string, { id: string; body: unknown }>;
  /** Per resource, the ids of the records the valid show/update cases work on (made at the start of that phase). */
  targets: Map<string, string[]>;
  onExchange?: (exchange: Exchange, operation: string | undefined) => void;
  log(line: string): void;
}

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
  const path = operation.path.replace(/\{([^}]+)\}/g, (_match, name: string) =>
    spec.rawId !== undefined ? spec.rawId : encodeURIComponent(spec.ids?.[name] ?? '1'),
  );
  return `${ctx.baseUrl}${path}${encodeQuery(spec.input?.query ?? {})}`;
}

export async function call(ctx: Context, operation: Operation, spec: RequestSpec = {}): Promise<Exchange> {
  const headers: Record<string, string> = {};
  if (operation.security.length > 0) {
    const credential =
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
  const exchange = await send({
    method: spec.method ?? operation.method,
    url: urlOf(ctx, operation, spec),
    headers,
    ...(body ? { body: body.text } : {}),
  });
  ctx.results.requests++;
  ctx.onExchange?.(exchange, operation.id);
  return exchange;
}

/** The record in a response body: the body itself or the object under its one wrapping property. */
export function recordOf(json: unknown, idParam: string): Record<string, unknown> | undefined {
  if (!json || typeof json !== 'object') return undefined;
  const record = json as Record<string, unknown>;
  if (idParam in record) return record;
  for (const value of Object.values(record)) {
    if (value && typeof value === 'object' && !Array.isArray(value) && idParam in value) {
      return value as Record<string, unknown>;
    }
  }
  return undefined;
}

/** The id of the record a create answered with: from the body, else the last segment of Location. */
export function idOf(resource: Resource, exchange: Exchange): string | undefined {
  const id = recordOf(exchange.reply.json, resource.idParam)?.[resource.idParam];
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  const location = exchange.reply.headers.location;
  return location ? decodeURIComponent(location.replace(/\/$/, '').split('/').at(-1) ?? '') || undefined : undefined;
}

/** The items of a list response: the body when it is an array, else its first array property. */
export function itemsOf(json: unknown): unknown[] | undefined {
  if (Array.isArray(json)) return json;
  if (!json || typeof json !== 'object') return undefined;
  return Object.values(json).find(Array.isArray) as unknown[] | undefined;
}

/** Runs `task` over `items` with at most `limit` at a time, keeping order of results. */
export async function pool<T, R>(
  items: T[],
  limit: number,
  task: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export const is2xx = (status: number) => status >= 200 && status < 300;
export const is4xx = (status: number) => status >= 400 && status < 500;
