// The transactional outbox: an event is written in the same transaction as the change that caused it, and handed
// there to the log's subscriber (webhooks/fan-out.ts queues its deliveries), so a committed change always has its
// event and what follows from it, and a rolled-back one has neither. The log knows nothing of who subscribes.
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/api.js';
import type { Database } from '../db/database.js';
import type { ChangeCause, ChangeLog } from '../db/owned.js';
import { precompiledShape } from '../db/precompiled.js';
import { etagOf } from '../etag.js';
import { currentTraceparent } from '../tracing.js';

export type EventType = components['schemas']['event-type'];

export interface NewEvent {
  accountId: number;
  type: EventType;
  data: object;
  cause: ChangeCause;
  /** The record the event is about (GET /events?object_id=); by default `data.object.id`. */
  objectId?: string | number;
}

export interface StoredEvent {
  id: number;
  publicId: string;
  accountId: number;
  type: EventType;
  /** The JSON body every delivery of the event sends. */
  payload: string;
}

/** Called with each event written, inside the writing transaction. */
export type EventSubscriber = (trx: Database, event: StoredEvent) => Promise<void>;

/** No subscriber: the event is logged only. */
export const NO_SUBSCRIBER: EventSubscriber = async () => {};

export function newEventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

// Every change writes an event: compiled once per engine and per which of its optional columns have a value (a
// null is no value precompiled.ts can stand in for; server/db/precompiled.ts): the key that made the change, the
// record it is about, and the trace it was written in while tracing is on.
interface EventColumns {
  key_id: string | null;
  object_id: string | null;
  trace_parent: string | null;
}
const OPTIONAL = ['key_id', 'object_id', 'trace_parent'] as const;

function insertEvent(
  db: Database,
  values: [publicId: string, accountId: number, type: string, createdAt: string, payload: string],
  optional: EventColumns,
) {
  const named = OPTIONAL.filter((column) => optional[column] !== null);
  const run = precompiledShape(`insert event ${named.join(' ') || '-'}`, (on, ...args: Array<string | number>) => {
    const [publicId, accountId, type, createdAt, payload, ...given] = args as [string, number, string, string, string];
    return on
      .insertInto('events')
      .values({
        public_id: publicId,
        account_id: accountId,
        type: type as EventType,
        created_at: createdAt,
        payload,
        ...Object.fromEntries(named.map((column, i) => [column, (given as string[])[i]])),
      })
      .returning('id');
  });
  return run(db, ...values, ...named.map((column) => optional[column] as string));
}

/** The cause as every event shows it (spec/components/schemas/event-cause.yaml). */
function causeBody({ requestId, idempotencyKey, actor }: ChangeCause) {
  return {
    request_id: requestId,
    idempotency_key: idempotencyKey,
    actor: { type: actor.type, key_id: actor.keyId, ip: actor.ip, user_agent: actor.userAgent },
  };
}

/** The record an event is about: as given, or the id of the record it carries. */
function objectIdOf(event: NewEvent): string | null {
  const id = event.objectId ?? (event.data as { object?: { id?: unknown } }).object?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

/** Writes the event in `db`'s transaction and hands it to `subscriber` there. */
export async function recordEvent(db: Database, event: NewEvent, subscriber: EventSubscriber): Promise<StoredEvent> {
  const publicId = newEventId();
  const timestamp = new Date().toISOString();
  const payload = JSON.stringify({
    id: publicId,
    type: event.type,
    timestamp,
    data: event.data,
    cause: causeBody(event.cause),
  });
  const [row] = await insertEvent(db, [publicId, event.accountId, event.type, timestamp, payload], {
    key_id: event.cause.actor.keyId,
    object_id: objectIdOf(event),
    // The trace of the request that made the change (when tracing is on): its deliveries' spans continue it.
    trace_parent: currentTraceparent() ?? null,
  });
  if (!row) throw new Error('event insert returned no row');
  const stored = { id: Number(row.id), publicId, accountId: event.accountId, type: event.type, payload };
  await subscriber(db, stored);
  return stored;
}

/**
 * The fields of `after` whose value differs from `before`, each with its value before (Stripe's
 * `previous_attributes`); `updated_at`, which every change moves, is left out.
 */
export function previousAttributes(before: object, after: object): Record<string, unknown> {
  const was = before as Record<string, unknown>;
  const previous: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(after)) {
    if (field === 'updated_at' || !(field in was)) continue;
    if (JSON.stringify(was[field]) !== JSON.stringify(value)) previous[field] = was[field];
  }
  return previous;
}

/** The change log of a resource's records: `<resource>.created`, `.updated`, `.deleted` events with the ETag. */
export function eventLog<R extends { id: number }>(
  resource: 'domain' | 'space',
  subscriber: EventSubscriber,
): ChangeLog<R> {
  return async (trx, { kind, accountId, changed, cause, previous }) => {
    const data = {
      object: changed.record,
      etag: etagOf(changed.record.id, changed.version),
      ...(kind === 'updated' ? { previous_attributes: previousAttributes(previous ?? {}, changed.record) } : {}),
    };
    await recordEvent(trx, { accountId, type: `${resource}.${kind}`, data, cause }, subscriber);
  };
}
