// The transactional outbox: an event is written in the same transaction as the change that caused it, and handed
// there to the log's subscriber (webhooks/fan-out.ts queues its deliveries), so a committed change always has its
// event and what follows from it, and a rolled-back one has neither. The log knows nothing of who subscribes.
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/api.js';
import type { Database } from '../db/database.js';
import type { ChangeCause, ChangeLog } from '../db/owned.js';
import { precompiledOnAny } from '../db/precompiled.js';
import { etagOf } from '../etag.js';
import { currentTraceparent } from '../tracing.js';

export type EventType = components['schemas']['event-type'];

export interface NewEvent {
  accountId: number;
  type: EventType;
  data: object;
  cause: ChangeCause;
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

// Every change writes an event: compiled once (server/db/precompiled.ts); with the trace it was written in, while
// tracing is on.
const insertEvent = precompiledOnAny(
  (db, publicId: string, accountId: number, type: string, createdAt: string, payload: string) =>
    db
      .insertInto('events')
      .values({ public_id: publicId, account_id: accountId, type: type as EventType, created_at: createdAt, payload })
      .returning('id'),
);
const insertTracedEvent = precompiledOnAny(
  (db, publicId: string, accountId: number, type: string, createdAt: string, payload: string, traceParent: string) =>
    db
      .insertInto('events')
      .values({
        public_id: publicId,
        account_id: accountId,
        type: type as EventType,
        created_at: createdAt,
        payload,
        trace_parent: traceParent,
      })
      .returning('id'),
);

/** Writes the event in `db`'s transaction and hands it to `subscriber` there. */
export async function recordEvent(db: Database, event: NewEvent, subscriber: EventSubscriber): Promise<StoredEvent> {
  const publicId = newEventId();
  const timestamp = new Date().toISOString();
  const payload = JSON.stringify({
    id: publicId,
    type: event.type,
    timestamp,
    data: event.data,
    cause: { request_id: event.cause.requestId, idempotency_key: event.cause.idempotencyKey },
  });
  // The trace of the request that made the change (when tracing is on): its deliveries' spans continue it.
  const traceParent = currentTraceparent();
  const [row] = traceParent
    ? await insertTracedEvent(db, publicId, event.accountId, event.type, timestamp, payload, traceParent)
    : await insertEvent(db, publicId, event.accountId, event.type, timestamp, payload);
  if (!row) throw new Error('event insert returned no row');
  const stored = { id: Number(row.id), publicId, accountId: event.accountId, type: event.type, payload };
  await subscriber(db, stored);
  return stored;
}

/** The change log of a resource's records: `<resource>.created`, `.updated`, `.deleted` events with the ETag. */
export function eventLog<R extends { id: number }>(
  resource: 'domain' | 'space',
  subscriber: EventSubscriber,
): ChangeLog<R> {
  return async (trx, { kind, accountId, changed, cause }) => {
    const data = { object: changed.record, etag: etagOf(changed.record.id, changed.version) };
    await recordEvent(trx, { accountId, type: `${resource}.${kind}`, data, cause }, subscriber);
  };
}
