// Migration 0011: each domain's routing (what its CNAME, A and AAAA records point at), and metadata on domains,
// spaces and webhook endpoints. Expand only: new columns with defaults and new tables, so that the previous
// release, which neither reads nor writes them, keeps working beside this one.
import type { Kysely } from 'kysely';
import { columnTypes } from './database.js';

// Frozen as this migration applied them (runtime code has its own list, in server/metadata/).
const TABLES_WITH_METADATA = ['domains', 'spaces', 'webhook_endpoints'] as const;

// biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
export async function addRoutingAndMetadata(db: Kysely<any>): Promise<void> {
  const type = columnTypes(db);
  // The routing code a list filters on (`not_checked` for a domain stored by the previous release), the rest of
  // the last routing observation as JSON, and when it was made.
  await db.schema
    .alterTable('domains')
    .addColumn('routing_code', 'text', (c) => c.notNull().defaultTo('not_checked'))
    .execute();
  await db.schema.alterTable('domains').addColumn('routing', 'text').execute();
  await db.schema.alterTable('domains').addColumn('routing_checked_at', type.timestamp).execute();
  // A list by routing code, and by state and routing code together (by state alone: domains_account_status).
  await db.schema
    .createIndex('domains_account_routing')
    .on('domains')
    .columns(['account_id', 'routing_code', 'id'])
    .execute();
  await db.schema
    .createIndex('domains_account_status_routing')
    .on('domains')
    .columns(['account_id', 'status', 'routing_code', 'id'])
    .execute();

  for (const table of TABLES_WITH_METADATA) {
    // The record's metadata as a JSON object, as every read returns it.
    await db.schema
      .alterTable(table)
      .addColumn('metadata', 'text', (c) => c.notNull().defaultTo('{}'))
      .execute();
    // The same pairs one row each, for `?metadata[key]=value`: an exact match is one index probe. A record's
    // rows go with it (ON DELETE CASCADE), also when the previous release deletes it.
    const pairs = `${table}_metadata`;
    await db.schema
      .createTable(pairs)
      .addColumn('record_id', type.key, (c) => c.notNull().references(`${table}.id`).onDelete('cascade'))
      .addColumn('account_id', type.key, (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint(`${pairs}_pkey`, ['record_id', 'key'])
      .execute();
    await db.schema
      .createIndex(`${pairs}_match`)
      .on(pairs)
      .columns(['account_id', 'key', 'value', 'record_id'])
      .execute();
  }
}
