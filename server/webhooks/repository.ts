// Persistence of webhook endpoints and of their delivery log. Takes and returns plain records; knows nothing
// of HTTP. The secret is only ever returned by create and rotate.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/api.js';
import { type Database, type PruneBatch, toIso } from '../db/database.js';
import type { WebhookEndpointsTable } from '../db/schema.js';
import { insertPairs, mergedMetadataOf, newMetadata, syncPairs } from '../metadata/pairs.js';
import { type Metadata, parseMetadata, serializeMetadata } from '../metadata/rules.js';
import { newSecret } from './signature.js';

// The records are the contract's shapes: enabled_events and disabled_reason hold only the values it names.
export type WebhookEndpointRecord = components['schemas']['webhook-endpoint'];
export type DeliveryAttemptRecord = components['schemas']['webhook-delivery'];
type EnabledEvents = WebhookEndpointRecord['enabled_events'];

export interface NewWebhookEndpoint {
  url: string;
  enabled_events: EnabledEvents;
  description: string | null;
  metadata?: Metadata;
  rate_limit?: number | null;
  headers?: Record<string, string> | null;
}

export interface WebhookEndpointChanges {
  rate_limit?: number | null;
  headers?: Record<string, string> | null;
  url?: string;
  enabled_events?: EnabledEvents;
  description?: string | null;
  status?: 'enabled' | 'disabled';
  /** Merged into the endpoint's metadata (an empty value removes a key). */
  metadata?: Metadata;
}

/** Headers as stored: JSON (`{}` as sent), or null. */
const storedHeaders = (headers: Record<string, string> | null | undefined) =>
  headers ? JSON.stringify(headers) : null;

const isoOrNull = (value: string | Date | null) => (value === null ? null : toIso(value));

/** The headers column as the record shows it; in an event (`withheld`) each value is left out. */
function headersOf(text: string | null, withheld: boolean): Record<string, string> | null {
  if (text === null) return null;
  const headers = JSON.parse(text) as Record<string, string>;
  return withheld ? Object.fromEntries(Object.keys(headers).map((name) => [name, '[withheld]'])) : headers;
}

export function toEndpointRecord(
  row: Selectable<WebhookEndpointsTable>,
  { withholdHeaderValues = false } = {},
): WebhookEndpointRecord {
  return {
    id: Number(row.id),
    url: row.url,
    enabled_events: JSON.parse(row.enabled_events) as EnabledEvents,
    description: row.description,
    metadata: parseMetadata(row.metadata),
    status: row.status,
    disabled_reason:
      row.status === 'enabled' ? null : (row.disabled_reason as WebhookEndpointRecord['disabled_reason']),
    secret_rotated_at: isoOrNull(row.secret_rotated_at),
    rate_limit: row.rate_limit === null || row.rate_limit === undefined ? null : Number(row.rate_limit),
    headers: headersOf(row.headers ?? null, withholdHeaderValues),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function webhookEndpointRepository(db: Database) {
  const owned = (accountId: number, id: number) =>
    db.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).where('id', '=', id);
  return {
    async list(accountId: number): Promise<WebhookEndpointRecord[]> {
      const rows = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('account_id', '=', accountId)
        .orderBy('id', 'asc')
        .execute();
      return rows.map((row) => toEndpointRecord(row));
    },

    async find(accountId: number, id: number): Promise<WebhookEndpointRecord | undefined> {
      const row = await owned(accountId, id).executeTakeFirst();
      return row && toEndpointRecord(row);
    },

    /** Undefined when the account has `max` endpoints already (counted in the insert's own transaction). */
    async create(
      accountId: number,
      endpoint: NewWebhookEndpoint,
      max: number,
    ): Promise<{ record: WebhookEndpointRecord; secret: string } | undefined> {
      return db.transaction().execute(async (trx) => {
        // Serializes the account's creates (PostgreSQL), so two at once cannot both pass the count.
        await trx
          .updateTable('accounts')
          .set({ name: (eb) => eb.ref('name') })
          .where('id', '=', accountId)
          .execute();
        const count = await trx
          .selectFrom('webhook_endpoints')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('account_id', '=', accountId)
          .executeTakeFirstOrThrow();
        if (Number(count.n) >= max) return undefined;
        const now = new Date().toISOString();
        const secret = newSecret();
        const metadata = newMetadata(endpoint.metadata);
        const row = await trx
          .insertInto('webhook_endpoints')
          .values({
            account_id: accountId,
            url: endpoint.url,
            enabled_events: JSON.stringify(endpoint.enabled_events),
            description: endpoint.description,
            metadata: serializeMetadata(metadata),
            rate_limit: endpoint.rate_limit ?? null,
            headers: storedHeaders(endpoint.headers),
            status: 'enabled',
            secret,
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        await insertPairs(trx, 'webhook_endpoints', accountId, Number(row.id), metadata);
        return { record: toEndpointRecord(row), secret };
      });
    },

    async update(
      accountId: number,
      id: number,
      changes: WebhookEndpointChanges,
    ): Promise<WebhookEndpointRecord | undefined> {
      const set: Record<string, unknown> = {};
      if (changes.url !== undefined) set.url = changes.url;
      if (changes.enabled_events !== undefined) set.enabled_events = JSON.stringify(changes.enabled_events);
      if (changes.description !== undefined) set.description = changes.description;
      if (changes.rate_limit !== undefined) set.rate_limit = changes.rate_limit;
      if (changes.headers !== undefined) set.headers = storedHeaders(changes.headers);
      if (changes.status === 'enabled')
        Object.assign(set, { status: 'enabled', disabled_reason: null, failing_since: null });
      if (changes.status === 'disabled') Object.assign(set, { status: 'disabled', disabled_reason: 'manual' });
      if (Object.keys(set).length === 0 && changes.metadata === undefined) return this.find(accountId, id);
      // One transaction: the metadata merged with what is stored, and no delivery of a type the endpoint stops
      // taking outlives the change (nor is sent to a new url); the delivery job checks again at send time
      // (deliveries.ts).
      const sent = changes.metadata;
      return db.transaction().execute(async (trx) => {
        if (sent !== undefined) {
          const merged = await mergedMetadataOf(trx, 'webhook_endpoints', accountId, id, sent);
          if (merged === undefined) return undefined;
          set.metadata = merged;
        }
        const row = await trx
          .updateTable('webhook_endpoints')
          .set({ ...set, updated_at: new Date().toISOString() })
          .where('account_id', '=', accountId)
          .where('id', '=', id)
          .returningAll()
          .executeTakeFirst();
        if (row && sent !== undefined) {
          await syncPairs(trx, 'webhook_endpoints', accountId, id, set.metadata as string);
        }
        if (row && changes.enabled_events !== undefined) {
          await cancelUntakenDeliveries(trx, Number(row.id), changes.enabled_events);
        }
        return row && toEndpointRecord(row);
      });
    },

    async remove(accountId: number, id: number): Promise<boolean> {
      const result = await db
        .deleteFrom('webhook_endpoints')
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    /** A new secret; the current one keeps signing beside it for `overlapMs`. */
    async rotateSecret(
      accountId: number,
      id: number,
      overlapMs: number,
    ): Promise<{ record: WebhookEndpointRecord; secret: string } | undefined> {
      const now = new Date();
      const secret = newSecret();
      const row = await db
        .updateTable('webhook_endpoints')
        .set((eb) => ({
          previous_secret: eb.ref('secret'),
          previous_secret_until: new Date(now.getTime() + overlapMs).toISOString(),
          secret,
          secret_rotated_at: now.toISOString(),
          updated_at: now.toISOString(),
        }))
        .where('account_id', '=', accountId)
        .where('id', '=', id)
        .returningAll()
        .executeTakeFirst();
      return row && { record: toEndpointRecord(row), secret };
    },

    /**
     * One page of the endpoint's attempts, newest first, below attempt id `before` when given; the receiver's
     * answer withheld for an event type the reader may not read (`readable`: events/read-scopes.ts's rule).
     */
    async attempts(
      endpointId: number,
      { limit, before, readable }: { limit: number; before?: number; readable: (type: string) => boolean },
    ): Promise<DeliveryAttemptRecord[]> {
      let query = db
        .selectFrom('webhook_attempts as a')
        .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .innerJoin('events as e', 'e.id', 'd.event_id')
        .select([
          'a.id',
          'e.public_id',
          'e.type',
          'a.attempt',
          'a.attempted_at',
          'a.status',
          'a.response_status',
          'a.latency_ms',
          'a.response_body',
          'a.error',
          'a.next_attempt_at',
          'a.retry_after_s',
        ])
        .where('a.endpoint_id', '=', endpointId)
        .orderBy('a.id', 'desc')
        .limit(limit);
      if (before !== undefined) query = query.where('a.id', '<', before);
      const rows = await query.execute();
      return rows.map((row) => {
        const withheld = !readable(row.type);
        return {
          id: Number(row.id),
          event_id: row.public_id,
          event_type: row.type as DeliveryAttemptRecord['event_type'],
          attempt: Number(row.attempt),
          attempted_at: toIso(row.attempted_at),
          status: row.status,
          response_status: row.response_status === null ? null : Number(row.response_status),
          latency_ms: Number(row.latency_ms),
          response_body: withheld ? null : row.response_body,
          withheld,
          error: row.error,
          next_attempt_at: isoOrNull(row.next_attempt_at),
          retry_after_s: row.retry_after_s === null ? null : Number(row.retry_after_s),
        };
      });
    },
  };
}

export type WebhookEndpointRepository = ReturnType<typeof webhookEndpointRepository>;

/**
 * Deletes up to `batchSize` finished deliveries (succeeded, failed or cancelled) queued before `before`, oldest
 * first, with their attempts (the database cascades), in one statement: its own short transaction, through the
 * `webhook_deliveries_created_at` index. A pending delivery is never pruned here: it is still being retried. Run
 * it before the events' pruning (events/repository.ts), which cascades to whatever deliveries remain. How many.
 */
export async function pruneDeliveries(db: Database, { before, batchSize }: PruneBatch): Promise<number> {
  const due = db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('created_at', '<', before.toISOString())
    .where('state', '!=', 'pending')
    .orderBy('created_at')
    .limit(batchSize);
  const result = await db.deleteFrom('webhook_deliveries').where('id', 'in', due).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Cancels the endpoint's queued deliveries (pending or retrying, forced ones too) of the types `enabledEvents` no
 * longer takes, in `trx` (the update that changed it): an endpoint receives only what it is subscribed to now,
 * whose read scopes the change was checked against (events/read-scopes.ts). A test (`webhook.test`) is kept: it
 * carries no record. How many were cancelled.
 */
export async function cancelUntakenDeliveries(
  trx: Database,
  endpointId: number,
  enabledEvents: readonly string[],
): Promise<number> {
  if (enabledEvents.includes('*')) return 0;
  const kept = [...enabledEvents, 'webhook.test'];
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'cancelled' })
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('events')
          .select('events.id')
          .whereRef('events.id', '=', 'webhook_deliveries.event_id')
          .where('events.type', 'not in', kept),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
