// Fan-out: the event log's subscriber that queues a delivery of each new event for every enabled endpoint of the
// account that wants its type, in the transaction that wrote the event (a committed change always has its
// deliveries, a rolled-back one has none), and wakes the delivery job at commit. Forced deliveries (a test, a
// redelivery to one endpoint by name) go through the same queue and its limit.
import { type Database, keptFromDelete } from '../db/database.js';
import { precompiledOnAny } from '../db/precompiled.js';
import { notifyAtCommit } from '../db/wakeups.js';
import type { EventSubscriber } from '../events/outbox.js';
import { NAMED_ONLY } from '../events/read-scopes.js';
import { disableEndpoint } from './endpoint-policy.js';
import type { WebhookSettings } from './settings.js';

/** The wake-up topic of the delivery job (db/wakeups.ts). */
export const DELIVERIES_TOPIC = 'webhook_deliveries';

/** Whether an endpoint's `enabled_events` (JSON) takes this type (`*` takes every type but the named-only ones). */
export function wants(enabledEvents: string, type: string): boolean {
  const types = JSON.parse(enabledEvents) as string[];
  return (types.includes('*') && !NAMED_ONLY(type)) || types.includes(type);
}

// Every change reads its account's endpoints: compiled once per engine (server/db/precompiled.ts). On PostgreSQL
// the rows are read FOR KEY SHARE, so an endpoint being deleted meanwhile is either waited for and skipped or
// deleted after this change commits (its deliveries with it), never gone under the delivery's foreign key.
// SQLite's transactions take the write lock up front (BEGIN IMMEDIATE), so nothing can delete it in between;
// a read before the transaction, on the reader, would not be safe: whoever queues reads the endpoints here.
const enabledEndpoints = precompiledOnAny((db, accountId: number) => {
  const query = db
    .selectFrom('webhook_endpoints')
    .select(['id', 'enabled_events'])
    .where('account_id', '=', accountId)
    .where('status', '=', 'enabled');
  return keptFromDelete(db, query);
});

/**
 * Every endpoint of the account, enabled or not, read in `trx` (the transaction that queues to them) and kept
 * from being deleted until it ends, as the fan-out's read is: a redelivery or a test never queues for an endpoint
 * deleted under it.
 */
export const lockedEndpoints = precompiledOnAny((db, accountId: number) => {
  const query = db
    .selectFrom('webhook_endpoints')
    .select(['id', 'enabled_events', 'status'])
    .where('account_id', '=', accountId)
    .orderBy('id');
  return keptFromDelete(db, query);
});

/** The endpoint a notice (`webhook_endpoint.*`) is about, which never receives it; undefined for other events. */
export function noticeSubject(type: string, payload: string): number | undefined {
  if (!type.startsWith('webhook_endpoint.')) return undefined;
  const data = (JSON.parse(payload) as { data?: { object?: { id?: unknown } } }).data;
  return Number(data?.object?.id);
}

/** The event log's subscriber: each event queued for the endpoints that want it. */
export function webhookFanOut(settings: Pick<WebhookSettings, 'maxQueuePerEndpoint'>): EventSubscriber {
  return async (trx, event) => {
    const endpoints = await enabledEndpoints(trx, event.accountId);
    const subject = noticeSubject(event.type, event.payload);
    const targets = endpoints.filter(
      (endpoint) => wants(endpoint.enabled_events, event.type) && Number(endpoint.id) !== subject,
    );
    if (targets.length === 0) return;
    await queueDeliveries(
      trx,
      event.id,
      targets.map((endpoint) => Number(endpoint.id)),
      settings,
    );
  };
}

/**
 * Queues the event for each endpoint, due at once. An endpoint whose queue is full (WEBHOOK_MAX_QUEUE undelivered
 * events) gets nothing: an enabled one is disabled (`queue_full`) and its queue cancelled, the events staying in the
 * log to be redelivered once it is fixed. Returns the endpoints it was queued for.
 */
export async function queueDeliveries(
  db: Database,
  eventId: number,
  endpointIds: number[],
  { maxQueuePerEndpoint }: Pick<WebhookSettings, 'maxQueuePerEndpoint'>,
  /** Sent even while an endpoint is disabled (a test; a redelivery to one endpoint by name). */
  forced = false,
): Promise<number[]> {
  const now = new Date();
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
    if (full) {
      if (!forced) {
        await disableEndpoint(db, endpointId, 'queue_full', now, undefined, webhookFanOut({ maxQueuePerEndpoint }));
      }
      continue;
    }
    queued.push(endpointId);
  }
  if (queued.length > 0) {
    const at = now.toISOString();
    await db
      .insertInto('webhook_deliveries')
      .values(
        queued.map((endpointId) => ({
          endpoint_id: endpointId,
          event_id: eventId,
          state: 'pending' as const,
          forced: forced ? 1 : 0,
          next_attempt_at: at,
          created_at: at,
        })),
      )
      .execute();
    await notifyAtCommit(db, DELIVERIES_TOPIC);
  }
  return queued;
}
