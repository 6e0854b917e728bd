// Migration 0007: the event log (the transactional outbox every change of a domain or a space writes to), the
// accounts' webhook endpoints, the deliveries queued for them and the log of each attempt.

import type { Kysely } from 'kysely';
import { columnTypes } from './database.js';

// biome-ignore lint/suspicious/noExplicitAny: a migration runs before the schema it creates exists.
export async function addEventsAndWebhooks(db: Kysely<any>): Promise<void> {
  const type = columnTypes(db);
  await db.schema
    .createTable('events')
    .addColumn('id', type.key, type.id)
    .addColumn('public_id', 'text', (c) => c.notNull().unique())
    .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', type.timestamp, (c) => c.notNull())
    // The body every delivery of the event sends, byte for byte (JSON).
    .addColumn('payload', 'text', (c) => c.notNull())
    .execute();
  // GET /events: newest first, optionally of one type; retention deletes by age.
  await db.schema.createIndex('events_account_id').on('events').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('events_account_type').on('events').columns(['account_id', 'type', 'id']).execute();
  await db.schema.createIndex('events_created_at').on('events').column('created_at').execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', type.key, type.id)
    .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of event types, or ["*"].
    .addColumn('enabled_events', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    // Kept as they are: signing needs the secret itself (unlike an API key, which is only compared).
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', type.timestamp)
    .addColumn('secret_rotated_at', type.timestamp)
    // Since when every attempt has failed (null after a success): disables the endpoint after days.
    .addColumn('failing_since', type.timestamp)
    .addColumn('created_at', type.timestamp, (c) => c.notNull())
    .addColumn('updated_at', type.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_account_id')
    .on('webhook_endpoints')
    .columns(['account_id', 'id'])
    .execute();

  // One row per event and endpoint to deliver to: pending until it succeeds or gives up. A worker claims a due
  // row for the length of a lease (claimed_by, claimed_until), so two instances never send the same attempt.
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', type.key, type.id)
    .addColumn('endpoint_id', type.key, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', type.key, (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // Sent even while the endpoint is disabled: a test, or a redelivery to that endpoint by name.
    .addColumn('forced', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', type.timestamp, (c) => c.notNull())
    .addColumn('claimed_by', 'text')
    .addColumn('claimed_until', type.timestamp)
    .addColumn('created_at', type.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['state', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'state'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').column('event_id').execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', type.key, type.id)
    .addColumn('delivery_id', type.key, (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
    .addColumn('endpoint_id', type.key, (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', type.timestamp, (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('response_status', 'integer')
    .addColumn('latency_ms', 'integer', (c) => c.notNull())
    .addColumn('response_body', 'text')
    .addColumn('error', 'text')
    .addColumn('next_attempt_at', type.timestamp)
    .execute();
  await db.schema
    .createIndex('webhook_attempts_endpoint')
    .on('webhook_attempts')
    .columns(['endpoint_id', 'id'])
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').column('delivery_id').execute();
}
