// The transactional outbox: an event is written in the same transaction as the change that caused it, with a
// delivery queued for each endpoint that wants its type, so a committed change always has its event and its
// deliveries, and a rolled-back one has neither. Delivery itself is the worker's (server/webhooks/worker.ts).
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/api.js';
import type { Database } from '../db/database.js';
import type { ChangeCause, ChangeLog } from '../db/owned.js';
import { precompiledOnAny } from '../db/precompiled.js';
import { etagOf } from '../etag.js';

export type EventType = components['schemas']['event-type'];

export interface NewEvent {
  accountId: number;
  type: EventType;
  data: object;
  cause: ChangeCause;
  /** Queue the event for this endpoint alone, enabled or not (a test delivery). */
  onlyEndpointId?: number;
}

export interface StoredEvent {
  id: number;
  publicId: string;
  /** The JSON body every delivery of the event sends. */
  payload: string;
}

/** What bounds the queue: past `maxQueuePerEndpoint` undelivered events, an endpoint is disabled (`queue_full`). */
export interface OutboxLimits {
  maxQueuePerEndpoint: number;
}

export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

const listeners = new Set<() => void>();

/** Calls `wake` whenever this process queued a delivery (once its transaction has had a moment to commit). */
export function onDeliveryQueued(wake: () => void): () => void {
  listeners.add(wake);
  return () => listeners.delete(wake);
}

function wakeWorkers(): void {
  // After the caller's transaction commits, as a rule: a worker that looks too early finds nothing and polls.
  setTimeout(() => {
    for (const wake of listeners) wake();
  }, 5).unref();
}

/** Whether an endpoint's `enabled_events` (JSON) takes this type. */
export function wants(enabledEvents: string, type: string): boolean {
  const types = JSON.parse(enabledEvents) as string[];
  return types.includes('*') || types.includes(type);
}

// Every change writes an event and reads its account's endpoints: both compiled once (server/db/precompiled.ts).
const insertEvent = precompiledOnAny(
  (db, publicId: string, accountId: number, type: string, createdAt: string, payload: string) =>
    db
      .insertInto('events')
      .values({ public_id: publicId, account_id: accountId, type: type as EventType, created_at: createdAt, payload })
      .returning('id'),
);
const enabledEndpoints = precompiledOnAny((db, accountId: number) =>
  db
    .selectFrom('webhook_endpoints')
    .select(['id', 'enabled_events'])
    .where('account_id', '=', accountId)
    .where('status', '=', 'enabled'),
);

export async function recordEvent(db: Database, event: NewEvent, limits: OutboxLimits): Promise<StoredEvent> {
  const publicId = newEventId();
  const timestamp = new Date().toISOString();
  const payload = JSON.stringify({
    id: publicId,
    type: event.type,
    timestamp,
    data: event.data,
    cause: { request_id: event.cause.requestId, idempotency_key: event.cause.idempotencyKey },
  });
  const [row] = await insertEvent(db, publicId, event.accountId, event.type, timestamp, payload);
  if (!row) throw new Error('event insert returned no row');
  const id = Number(row.id);
  const endpoints =
    event.onlyEndpointId === undefined
      ? await enabledEndpoints(db, event.accountId)
      : await db
          .selectFrom('webhook_endpoints')
          .select(['id', 'enabled_events'])
          .where('account_id', '=', event.accountId)
          .where('id', '=', event.onlyEndpointId)
          .execute();
  const targets = endpoints.filter(
    (endpoint) => event.onlyEndpointId !== undefined || wants(endpoint.enabled_events, event.type),
  );
  const ids = targets.map((endpoint) => Number(endpoint.id));
  await queueDeliveries(db, id, ids, limits, event.onlyEndpointId !== undefined);
  return { id, publicId, payload };
}

/**
 * Queues the event for each endpoint, due at once. An endpoint whose queue is full is disabled instead
 * (`queue_full`) and its queue cancelled: the events stay in the log, to be redelivered once it is fixed.
 * Returns the endpoints it was queued for.
 */
export async function queueDeliveries(
  db: Database,
  eventId: number,
  endpointIds: number[],
  { maxQueuePerEndpoint }: OutboxLimits,
  /** Sent even while an endpoint is disabled (a test; a redelivery to one endpoint by name). */
  forced = false,
): Promise<number[]> {
  const now = new Date().toISOString();
  const queued: number[] = [];
  for (const endpointId of endpointIds) {
    const full = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('state', '=', 'pending')
      .offset(maxQueuePerEndpoint - 1)
      .limit(1)
      .executeTakeFirst();
    if (full && !forced) {
      await db
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled', disabled_reason: 'queue_full', updated_at: now })
        .where('id', '=', endpointId)
        .execute();
      await db
        .updateTable('webhook_deliveries')
        .set({ state: 'cancelled' })
        .where('endpoint_id', '=', endpointId)
        .where('state', '=', 'pending')
        .execute();
      continue;
    }
    queued.push(endpointId);
  }
  if (queued.length > 0) {
    await db
      .insertInto('webhook_deliveries')
      .values(
        queued.map((endpointId) => ({
          endpoint_id: endpointId,
          event_id: eventId,
          state: 'pending' as const,
          forced: forced ? 1 : 0,
          next_attempt_at: now,
          created_at: now,
        })),
      )
      .execute();
    wakeWorkers();
  }
  return queued;
}

/** The change log of a resource's records: `<resource>.created`, `.updated`, `.deleted` events with the ETag. */
export function eventLog<R extends { id: number }>(resource: 'domain' | 'space', limits: OutboxLimits): ChangeLog<R> {
  return async (trx, { kind, accountId, changed, cause }) => {
    const data = { object: changed.record, etag: etagOf(changed.record.id, changed.version) };
    await recordEvent(trx, { accountId, type: `${resource}.${kind}`, data, cause }, limits);
  };
}
