// createClient: the options, the raw typed openapi-fetch client (with retries and timeouts underneath) and the
// resource helpers built on it.
import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from '../../generated/api.js';
import { startCall, untilAborted } from './call.js';
import { ApiError } from './errors.js';
import { formBody } from './form-body.js';
import { takesJsonOnly } from './json-only.js';
import { type ApiKeysApi, apiKeysApi } from './key-apis.js';
import { type RateLimitState, readRateLimit } from './rate-limit.js';
import {
  type CallOptions,
  type CollectionPath,
  type ResourceApi,
  recordOf,
  resourceApi,
  type Send,
} from './resources.js';
import { type Fetch, fetchWithRetries, type RetrySettings } from './retrying-fetch.js';
import type { Domain } from './types.js';
import { VERSION } from './version.js';
import { type EventsApi, eventsApi, type WebhookEndpointsApi, webhookEndpointsApi } from './webhook-apis.js';

export interface ClientOptions {
  /** The API's base URL, including `/api/v1`, e.g. `http://127.0.0.1:3000/api/v1`. */
  baseUrl: string;
  /** A key from `npm run keys -- create`, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** The fetch to send with (default: globalThis.fetch when each request is sent). Pass its init along: it carries the signal. */
  fetch?: Fetch;
  /**
   * Default `domain-space-client/<version>` outside browsers. In a browser none is set by default: the browser
   * sends its own, and a page on another origin would need the API's CORS rules to allow the header.
   */
  userAgent?: string;
  /** Sent with every request; they override the client's defaults of the same name, except Authorization. */
  headers?: Record<string, string>;
  /**
   * How bodies are sent: `form` (application/x-www-form-urlencoded, the default) or `json`. Operations that take
   * JSON only (webhook endpoints, redelivery) are always sent JSON, through `raw` too.
   */
  bodyEncoding?: 'form' | 'json';
  /** Retries of 429, 503 and network errors (of a POST only with an Idempotency-Key). Default 2; 0 disables. */
  maxRetries?: number;
  /**
   * Send a new random Idempotency-Key with every `create` (default true), so that a create is retried like
   * any other call and still creates one record. `false` sends none (and a create is then never retried).
   */
  idempotencyKeys?: boolean;
  /** Per call, all attempts and the waits between them included. Default 30 000; 0 disables. */
  timeoutMs?: number;
  /** The longest wait before a retry; a longer Retry-After ends the call with the ApiError. Default 30 000. */
  maxRetryDelayMs?: number;
  /** Aborts every call of this client (e.g. on shutdown). */
  signal?: AbortSignal;
}

export interface DomainsApi extends ResourceApi<'/domains'> {
  /**
   * POST /domains/{id}/verify: looks the domain's TXT record (`verification`) up now and resolves to the domain
   * in its new state, with what the lookup observed in `observation`. Not retried on 429 (a POST): the ApiError's
   * `retryAfter` says when the next verify of this domain is accepted. Scope: `domains:write`.
   */
  verify(id: number, options?: CallOptions): Promise<Domain>;
}
export type SpacesApi = ResourceApi<'/spaces'>;

/**
 * A helper per collection of the contract (`/domains` → `domains`), derived from generated/api.ts: a collection
 * the contract gains and createClient lacks does not compile.
 */
export type ResourceApis = { [P in CollectionPath as P extends `/${infer Name}` ? Name : never]: ResourceApi<P> };

export interface DomainSpaceClient extends ResourceApis {
  domains: DomainsApi;
  /** Webhook endpoints: create, listAll, rotateSecret, test, deliveries, … (JSON bodies). */
  webhookEndpoints: WebhookEndpointsApi;
  /** The event log (filters: since, until, key_id, object_id, type), and redelivery. */
  events: EventsApi;
  /** The account's API keys: current, list, listAll, create, rotate, revoke (JSON bodies). */
  apiKeys: ApiKeysApi;
  /**
   * The typed openapi-fetch client for every path; it answers `{ data, error, response }` instead of throwing
   * an ApiError, but has the same retries and timeout (up to the arrival of the final answer's headers), and
   * throws NetworkError and TimeoutError.
   */
  raw: Client<paths>;
  /**
   * The rate limit as the latest answer stated it (RateLimit fields), retried attempts and `raw` calls
   * included; undefined before the first answer, or when the API sends none.
   */
  readonly rateLimit: RateLimitState | undefined;
}

const maxTimerMs = 2_147_483_647;

export function createClient(options: ClientOptions): DomainSpaceClient {
  const validated = validate(options);
  let rateLimit: RateLimitState | undefined;
  // Every answer, each attempt of a retried call too, updates the rate-limit state.
  const settings: Settings = {
    ...validated,
    fetch: async (input, init) => {
      const response = await validated.fetch(input, init);
      rateLimit = readRateLimit(response.headers);
      return response;
    },
  };
  const { signal: clientSignal, timeoutMs } = settings;

  const headers = new Headers({ Accept: 'application/json, application/problem+json' });
  if (settings.userAgent) headers.set('User-Agent', settings.userAgent);
  // openapi-fetch labels every body application/json unless a Content-Type is given; the form serializer below
  // does the encoding. The header rides on bodyless requests too, where servers ignore it (and it is CORS-safe).
  if (settings.bodyEncoding === 'form') headers.set('Content-Type', 'application/x-www-form-urlencoded');
  for (const [name, value] of Object.entries(options.headers ?? {})) headers.set(name, value);
  // Last, so that apiKey wins over an Authorization in headers.
  headers.set('Authorization', `Bearer ${settings.apiKey}`);

  const base = createFetchClient<paths>({
    baseUrl: settings.baseUrl,
    headers,
    bodySerializer: settings.bodyEncoding === 'form' ? formBody : (body: unknown) => JSON.stringify(body),
    // Calls made through `raw`: one call per request, timed until the final answer's headers arrive.
    fetch: async (request) => {
      const call = startCall([clientSignal, request.signal], timeoutMs);
      try {
        return await fetchWithRetries(request, call, settings);
      } finally {
        call.done();
      }
    },
  });

  // An operation that takes JSON only gets JSON whatever bodyEncoding says (unless the call sets its own
  // Content-Type): openapi-fetch's documented per-request bodySerializer and headers.
  const jsonWhereOnlyJson = <M extends 'POST' | 'PUT' | 'PATCH'>(method: M): Client<paths>[M] =>
    ((path: string, init?: { headers?: HeadersInit; bodySerializer?: unknown }) => {
      const own = new Headers(init?.headers as HeadersInit | undefined);
      const json = settings.bodyEncoding === 'form' && takesJsonOnly(path, method) && !own.has('Content-Type');
      const call = base[method] as unknown as (path: string, init: object) => unknown;
      if (!json) return call(path, init ?? {});
      own.set('Content-Type', 'application/json');
      return call(path, { ...init, headers: own, bodySerializer: (body: unknown) => JSON.stringify(body) });
    }) as unknown as Client<paths>[M];
  const raw: Client<paths> = {
    ...base,
    POST: jsonWhereOnlyJson('POST'),
    PUT: jsonWhereOnlyJson('PUT'),
    PATCH: jsonWhereOnlyJson('PATCH'),
  };

  const send: Send = async (method, path, init, callOptions) => {
    const call = startCall([clientSignal, callOptions?.signal], callTimeout(callOptions, timeoutMs));
    try {
      const request = raw[method] as unknown as (path: string, init: object) => ReturnType<Client<paths>['GET']>;
      const sent = request(path, {
        ...init,
        signal: call.signal,
        fetch: (request: Request) => fetchWithRetries(request, call, settings),
      });
      // The timeout and the signals cover reading the answer too.
      const { data, error, response } = await untilAborted(sent, call);
      // A 304 is the answer getIfChanged hopes for: the copy it names is current.
      if (!response.ok && response.status !== 304) throw new ApiError(response, error);
      return { data, response };
    } catch (error) {
      throw call.failure(error);
    } finally {
      call.done();
    }
  };

  const resources: ResourceApis & { domains: DomainsApi } = {
    domains: {
      ...resourceApi(send, '/domains', settings),
      verify: (id, options) =>
        recordOf<Domain>(send('POST', '/domains/{id}/verify', { params: { path: { id } } }, options)),
    },
    spaces: resourceApi(send, '/spaces', settings),
  };
  return {
    ...resources,
    webhookEndpoints: webhookEndpointsApi(send, settings),
    events: eventsApi(send),
    apiKeys: apiKeysApi(send),
    raw,
    get rateLimit() {
      return rateLimit;
    },
  };
}

interface Settings extends RetrySettings {
  baseUrl: string;
  apiKey: string;
  userAgent: string | undefined;
  bodyEncoding: 'form' | 'json';
  timeoutMs: number;
  signal: AbortSignal | undefined;
  idempotencyKeys: boolean;
}

function validate(options: ClientOptions): Settings {
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('createClient needs an options object: { baseUrl, apiKey }');
  }
  const { baseUrl, apiKey, fetch, bodyEncoding = 'form' } = options;
  if (typeof baseUrl !== 'string' || baseUrl.trim() === '') {
    throw new TypeError('createClient: baseUrl is required, e.g. "http://127.0.0.1:3000/api/v1"');
  }
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new TypeError('createClient: apiKey is required (a key from `npm run keys -- create`)');
  }
  if (fetch !== undefined && typeof fetch !== 'function') throw new TypeError('createClient: fetch must be a function');
  if (fetch === undefined && typeof globalThis.fetch !== 'function') {
    throw new TypeError('createClient: this runtime has no global fetch; pass one as the fetch option');
  }
  if (bodyEncoding !== 'form' && bodyEncoding !== 'json') {
    throw new TypeError(`createClient: bodyEncoding must be "form" or "json", not ${JSON.stringify(bodyEncoding)}`);
  }
  // Duck-typed: a signal from another realm (an iframe) or a polyfill fails instanceof.
  if (options.signal !== undefined && typeof options.signal?.addEventListener !== 'function') {
    throw new TypeError('createClient: signal must be an AbortSignal');
  }
  return {
    baseUrl,
    apiKey,
    // Called as a plain function: a browser's fetch throws "Illegal invocation" when called as a method of another object.
    fetch: fetch ?? ((input, init) => globalThis.fetch(input, init)),
    userAgent: options.userAgent ?? (inBrowser() ? undefined : `domain-space-client/${VERSION}`),
    bodyEncoding,
    maxRetries: count('maxRetries', options.maxRetries, 2),
    timeoutMs: milliseconds('timeoutMs', options.timeoutMs, 30_000),
    maxRetryDelayMs: milliseconds('maxRetryDelayMs', options.maxRetryDelayMs, 30_000),
    signal: options.signal,
    idempotencyKeys: flag('idempotencyKeys', options.idempotencyKeys, true),
  };
}

function flag(name: string, value: boolean | undefined, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw new TypeError(`createClient: ${name} must be true or false, not ${value}`);
  return value;
}

/** A window or a worker: both have a user agent of their own. */
function inBrowser(): boolean {
  const scope = globalThis as { document?: unknown; WorkerGlobalScope?: unknown };
  return scope.document !== undefined || scope.WorkerGlobalScope !== undefined;
}

function callTimeout(options: CallOptions | undefined, fallback: number): number {
  return options?.timeoutMs === undefined ? fallback : milliseconds('timeoutMs', options.timeoutMs, fallback);
}

function count(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0) throw new TypeError(`${name} must be a whole number >= 0, not ${value}`);
  return value;
}

function milliseconds(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 0 || value > maxTimerMs) {
    throw new TypeError(`${name} must be a whole number of milliseconds from 0 to ${maxTimerMs}, not ${value}`);
  }
  return value;
}
