// The helpers of webhook endpoints and of the event log, in the style of the resource helpers (resources.ts):
// each throws an ApiError on failure and resolves to the record itself (ETag kept for etagOf()); list walks
// follow the cursor of `links.next`. Their bodies are sent as JSON, which these operations take only
// (json-only.ts).
import { newIdempotencyKey } from './idempotency-key.js';
import {
  byCursor,
  byId,
  type CallOptions,
  type CreateOptions,
  ifMatch,
  recordOf,
  type Send,
  type WriteOptions,
} from './resources.js';
import type {
  EventListParams,
  EventPage,
  EventTypeInfo,
  Redelivery,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDeliveryParams,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointUpdate,
  WebhookEndpointWithSecret,
  WebhookEvent,
  WebhookRecoverRequest,
  WebhookRecovery,
  WebhookRecoveryPage,
  WebhookRecoveryParams,
} from './types.js';

export interface WebhookEndpointsApi {
  /** Every endpoint of the account, oldest first (an account has at most 20 by default). Scope: `webhooks:read`. */
  list(options?: CallOptions): Promise<WebhookEndpoint[]>;
  /** The same, one endpoint at a time (as the other resources' listAll). Scope: `webhooks:read`. */
  listAll(options?: CallOptions): AsyncGenerator<WebhookEndpoint, void, undefined>;
  /** Scope: `webhooks:read`. */
  get(id: number, options?: CallOptions): Promise<WebhookEndpoint>;
  /**
   * Registers a URL for the event types in `enabled_events` (`['*']` for all); resolves to the endpoint and its
   * signing `secret`, shown this once. Scope: `webhooks:write`, and the read scope of each type's records
   * (`spaces:read` for `space.*`, `domains:read` for `domain.*`, both for `*`). Not retried (no Idempotency-Key).
   */
  create(body: WebhookEndpointCreate, options?: CallOptions): Promise<WebhookEndpointWithSecret>;
  /** PATCH: changes the fields sent. Scope: `webhooks:write` (a new `url` or `enabled_events`: as create). */
  update(id: number, body: WebhookEndpointUpdate, options?: WriteOptions): Promise<WebhookEndpoint>;
  /** PUT: the contract gives it the same meaning as PATCH. Scope: as update. */
  replace(id: number, body: WebhookEndpointUpdate, options?: WriteOptions): Promise<WebhookEndpoint>;
  /** Scope: `webhooks:write`. */
  delete(id: number, options?: WriteOptions): Promise<void>;
  /**
   * A new signing secret (shown this once); the previous one keeps signing beside it for the overlap the
   * operator set (24 h by default). Scope: `webhooks:write`.
   */
  rotateSecret(id: number, options?: CallOptions): Promise<WebhookEndpointWithSecret>;
  /** Sends a `webhook.test` event to this endpoint alone; resolves to the event. Scope: `webhooks:write`. */
  test(id: number, options?: CallOptions): Promise<WebhookEvent>;
  /**
   * The endpoint's delivery log, newest first, one attempt at a time (following the cursor, 100 per page unless
   * `params.per_page` says otherwise). A `break` stops the fetching. Scope: `webhooks:read`.
   */
  deliveries(
    id: number,
    params?: WebhookDeliveryParams,
    options?: CallOptions,
  ): AsyncGenerator<WebhookDelivery, void, undefined>;
  /**
   * After an outage: queues again, in the background, each event since `since` (until `until`, now by default)
   * that the endpoint subscribes to and has not received, with its original webhook-id; resolves to the running
   * recovery (follow it with `recovery`). Sends an Idempotency-Key (see CreateOptions), so it is retried like the
   * other calls. Scope: `webhooks:write` and the read scope of every type the endpoint receives.
   */
  recover(id: number, body: WebhookRecoverRequest, options?: CreateOptions): Promise<WebhookRecovery>;
  /** One recovery of the endpoint, to follow it until its `status` is no longer `running`. Scope: `webhooks:read`. */
  recovery(id: number, recoveryId: number, options?: CallOptions): Promise<WebhookRecovery>;
  /**
   * The endpoint's recoveries, newest first, fetched a page at a time by cursor (100 per page unless
   * `params.per_page` says otherwise). Scope: `webhooks:read`.
   */
  recoveries(
    id: number,
    params?: WebhookRecoveryParams,
    options?: CallOptions,
  ): AsyncGenerator<WebhookRecovery, void, undefined>;
}

export interface EventsApi {
  /** One page of the account's events, newest first: `{ data, links }`. Scope: `events:read`. */
  list(params?: EventListParams, options?: CallOptions): Promise<EventPage>;
  /** Every event, newest first, fetched a page at a time by cursor. Scope: `events:read`. */
  listAll(params?: EventListParams, options?: CallOptions): AsyncGenerator<WebhookEvent, void, undefined>;
  /**
   * Queues the event again for one endpoint (`endpointId`) or for every enabled endpoint that receives its type.
   * Scope: `webhooks:write` and `events:read`, and the read scope of the event's record.
   */
  redeliver(eventId: string, endpointId?: number, options?: CallOptions): Promise<Redelivery>;
  /**
   * Every event type, with its description, the read scope a subscription needs and its payload's JSON Schema
   * (self-contained), as the service's contract has them. Any key.
   */
  eventTypes(options?: CallOptions): Promise<EventTypeInfo[]>;
}

export function webhookEndpointsApi(send: Send, { idempotencyKeys = true } = {}): WebhookEndpointsApi {
  const withSecret = async (sent: ReturnType<Send>): Promise<WebhookEndpointWithSecret> => {
    const { data } = await sent;
    const { data: record, secret } = data as { data: WebhookEndpoint; secret: string };
    return { ...record, secret };
  };
  const list = async (options?: CallOptions) =>
    ((await send('GET', '/webhook-endpoints', {}, options)).data as { data: WebhookEndpoint[] }).data;
  return {
    list,
    async *listAll(options) {
      yield* await list(options);
    },
    get: (id, options) => recordOf(send('GET', '/webhook-endpoints/{id}', byId(id), options)),
    create: (body, options) => withSecret(send('POST', '/webhook-endpoints', { body }, options)),
    update: (id, body, options) =>
      recordOf(send('PATCH', '/webhook-endpoints/{id}', { ...byId(id, ifMatch(options)), body }, options)),
    replace: (id, body, options) =>
      recordOf(send('PUT', '/webhook-endpoints/{id}', { ...byId(id, ifMatch(options)), body }, options)),
    async delete(id, options) {
      await send('DELETE', '/webhook-endpoints/{id}', byId(id, ifMatch(options)), options);
    },
    rotateSecret: (id, options) => withSecret(send('POST', '/webhook-endpoints/{id}/rotate-secret', byId(id), options)),
    test: (id, options) => recordOf(send('POST', '/webhook-endpoints/{id}/test', byId(id), options)),
    deliveries(id, params, options) {
      const { after: first, ...query } = { per_page: 100, ...params } as WebhookDeliveryParams & { after?: string };
      const page = async (after: string | undefined) =>
        (
          await send(
            'GET',
            '/webhook-endpoints/{id}/deliveries',
            { params: { path: { id }, query: { ...query, ...(after ? { after } : {}) } } },
            options,
          )
        ).data as WebhookDeliveryPage;
      return byCursor(page, first);
    },
    recover(id, body, options) {
      const key = options?.idempotencyKey ?? (idempotencyKeys ? newIdempotencyKey() : false);
      const headers = key === false ? {} : { 'Idempotency-Key': key };
      return recordOf(send('POST', '/webhook-endpoints/{id}/recover', { ...byId(id), body, headers }, options));
    },
    recovery: (id, recoveryId, options) =>
      recordOf(
        send(
          'GET',
          '/webhook-endpoints/{id}/recoveries/{recovery_id}',
          { params: { path: { id, recovery_id: recoveryId } } },
          options,
        ),
      ),
    recoveries(id, params, options) {
      const { after: first, ...query } = { per_page: 100, ...params } as WebhookRecoveryParams & { after?: string };
      const page = async (after: string | undefined) =>
        (
          await send(
            'GET',
            '/webhook-endpoints/{id}/recoveries',
            { params: { path: { id }, query: { ...query, ...(after ? { after } : {}) } } },
            options,
          )
        ).data as WebhookRecoveryPage;
      return byCursor(page, first);
    },
  };
}

export function eventsApi(send: Send): EventsApi {
  const list = async (params?: EventListParams, options?: CallOptions) =>
    (await send('GET', '/events', { params: { query: params ?? {} } }, options)).data as EventPage;
  return {
    list,
    listAll(params, options) {
      const { after: first, ...query } = { per_page: 100, ...params } as EventListParams & { after?: string };
      return byCursor((after) => list({ ...query, ...(after ? { after } : {}) } as EventListParams, options), first);
    },
    redeliver: (eventId, endpointId, options) =>
      recordOf(
        send(
          'POST',
          '/events/{id}/redeliver',
          { params: { path: { id: eventId } }, body: endpointId === undefined ? {} : { endpoint_id: endpointId } },
          options,
        ),
      ),
    eventTypes: async (options) =>
      ((await send('GET', '/event-types', {}, options)).data as { data: EventTypeInfo[] }).data,
  };
}
