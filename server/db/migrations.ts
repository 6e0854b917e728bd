// Schema migrations, kept in code and applied in order at start-up (and by the keys command). Column types
// that differ between engines come from the adapter.
import type { Migration, MigrationProvider } from 'kysely';
import { DEFAULT_MIGRATION_TABLE, type Kysely, Migrator, sql } from 'kysely';
import { addCountsAndSearch } from './counts-and-search.js';
import { columnTypes, engineOf } from './database.js';
import { addDomainStates } from './domain-states.js';
import { addEventsAndWebhooks } from './events-and-webhooks.js';
import { classify } from './faults.js';
import { addRoutingAndMetadata } from './routing-and-metadata.js';

const migrations: Record<string, Migration> = {
  '0001_initial': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs before the schema it creates exists.
    async up(db: Kysely<any>) {
      const type = columnTypes(db);
      await db.schema
        .createTable('accounts')
        .addColumn('id', type.key, type.id)
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', type.timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', type.key, type.id)
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('label', 'text')
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', type.timestamp, (c) => c.notNull())
        .addColumn('revoked_at', type.timestamp)
        .execute();

      for (const table of ['domains', 'spaces'] as const) {
        let builder = db.schema
          .createTable(table)
          .addColumn('id', type.key, type.id)
          .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('name', 'text', (c) => (table === 'domains' ? c.notNull().unique() : c.notNull()))
          .addColumn('name_key', type.sortKey, (c) => c.notNull());
        builder =
          table === 'domains'
            ? builder.addColumn('index_page', 'text').addColumn('not_found_page', 'text')
            : builder.addColumn('color', 'integer', (c) => c.notNull().check(sql`color between 1 and 6`));
        await builder
          .addColumn('created_at', type.timestamp, (c) => c.notNull())
          .addColumn('updated_at', type.timestamp, (c) => c.notNull())
          .execute();
        // Every list is one account's records, sorted by id or by name with id as the tie-breaker.
        await db.schema.createIndex(`${table}_account_id`).on(table).columns(['account_id', 'id']).execute();
        await db.schema
          .createIndex(`${table}_account_name`)
          .on(table)
          .columns(['account_id', 'name_key', 'id'])
          .execute();
      }
    },
  },
  '0002_key_last_used': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('api_keys').addColumn('last_used_at', columnTypes(db).timestamp).execute();
    },
  },
  '0003_idempotency_and_versions': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs before the schema it creates exists.
    async up(db: Kysely<any>) {
      const type = columnTypes(db);
      // The version behind each record's ETag: 1 at creation, one up with every change.
      for (const table of ['domains', 'spaces']) {
        await db.schema
          .alterTable(table)
          .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
          .execute();
      }
      // One row per Idempotency-Key of an account: pending (status null, held by lock_token) while the first
      // request runs, then its saved answer, kept 24 hours from created_at.
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('lock_token', 'text')
        .addColumn('locked_at', type.timestamp)
        .addColumn('status', 'integer')
        .addColumn('headers', 'text')
        .addColumn('body', 'text')
        .addColumn('created_at', type.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pkey', ['account_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_created_at').on('idempotency_keys').column('created_at').execute();
    },
  },
  '0004_counts_and_search': { up: addCountsAndSearch },
  '0005_domain_states': { up: addDomainStates },
  '0006_key_scopes': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      const type = columnTypes(db);
      // Null scopes: every scope, as every key made before scopes existed had (server/accounts/key-policy.ts).
      await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
      await db.schema.alterTable('api_keys').addColumn('expires_at', type.timestamp).execute();
      await db.schema.alterTable('api_keys').addColumn('allowed_ips', 'text').execute();
      // A rotated key names its successor (its start is the successor's created_at).
      await db.schema.alterTable('api_keys').addColumn('replaced_by', 'text').execute();
    },
  },
  '0007_events_and_webhooks': { up: addEventsAndWebhooks },
  '0008_service_secrets': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('service_secrets')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('value', 'text', (c) => c.notNull())
        .execute();
    },
  },
  '0009_fair_delivery_claims': {
    // Indexes only (the previous release's queries are unchanged): the fair claim's probe of each endpoint's next
    // due deliveries, and its count of what is in flight (few rows hold a claim at a time).
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      await db.schema
        .createIndex('webhook_deliveries_endpoint_due')
        .on('webhook_deliveries')
        .columns(['endpoint_id', 'state', 'next_attempt_at', 'id'])
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_claimed')
        .on('webhook_deliveries')
        .column('claimed_until')
        .where(sql.ref('claimed_until'), 'is not', null)
        .execute();
    },
  },
  '0010_verify_limits_and_retention': {
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      const type = columnTypes(db);
      // The per-domain verify limit's window, kept by account and name rather than in the domain's row, so that
      // a delete and a new store of the name does not start a fresh window. (The previous release still counts
      // in the row's verify_window_started_at and verify_count, which stay.)
      await db.schema
        .createTable('domain_verify_windows')
        .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('started_at', type.timestamp, (c) => c.notNull())
        .addColumn('count', 'integer', (c) => c.notNull())
        .addPrimaryKeyConstraint('domain_verify_windows_pkey', ['account_id', 'name'])
        .execute();
      await db.schema
        .createIndex('domain_verify_windows_started_at')
        .on('domain_verify_windows')
        .column('started_at')
        .execute();
      // The fair claim of due checks asks when each account's checks last ran (domains/scheduled-check.ts).
      await db.schema
        .createIndex('domains_account_checked')
        .on('domains')
        .columns(['account_id', 'last_checked_at'])
        .execute();
      // Retention deletes finished deliveries by age, a batch at a time (webhooks/repository.ts).
      await db.schema
        .createIndex('webhook_deliveries_created_at')
        .on('webhook_deliveries')
        .column('created_at')
        .execute();
    },
  },
  '0011_domain_routing_and_metadata': { up: addRoutingAndMetadata },
  '0012_event_actors': {
    // Expand only: two nullable columns that the previous release leaves null (its events then match no
    // key_id or object_id filter), and the indexes of GET /events' filters, each ending in the list's order (id).
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('events').addColumn('key_id', 'text').execute();
      await db.schema.alterTable('events').addColumn('object_id', 'text').execute();
      await db.schema.createIndex('events_account_key').on('events').columns(['account_id', 'key_id', 'id']).execute();
      await db.schema
        .createIndex('events_account_object')
        .on('events')
        .columns(['account_id', 'object_id', 'id'])
        .execute();
      await db.schema
        .createIndex('events_account_created')
        .on('events')
        .columns(['account_id', 'created_at', 'id'])
        .execute();
      // When a key's api_key.expired event was written. A key already expired (or revoked) now gets none: its
      // expiry came before there were key events.
      const type = columnTypes(db);
      await db.schema.alterTable('api_keys').addColumn('expiry_noted_at', type.timestamp).execute();
      const now = new Date().toISOString();
      await db
        .updateTable('api_keys')
        .set({ expiry_noted_at: now })
        .where((eb) => eb.or([eb('expires_at', '<=', now), eb('revoked_at', 'is not', null)]))
        .execute();
      await db.schema
        .createIndex('api_keys_expiry_due')
        .on('api_keys')
        .column('expires_at')
        .where(sql.ref('expiry_noted_at'), 'is', null)
        .execute();
    },
  },
  '0013_webhook_recoveries_and_notices': {
    // Expand only: a new table and a new nullable column, which the previous release neither reads nor writes.
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      const type = columnTypes(db);
      // POST /webhook-endpoints/{id}/recover: the window, how far the recovery job has walked the event log
      // (after_event_id) and its lease (claimed_by, claimed_until), so that a kill or another instance resumes it.
      await db.schema
        .createTable('webhook_recoveries')
        .addColumn('id', type.key, type.id)
        .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('endpoint_id', type.key, (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
        .addColumn('since', type.timestamp, (c) => c.notNull())
        .addColumn('until', type.timestamp, (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('queued', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('skipped', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('after_event_id', type.key, (c) => c.notNull().defaultTo(0))
        .addColumn('claimed_by', 'text')
        .addColumn('claimed_until', type.timestamp)
        .addColumn('stepped_at', type.timestamp, (c) => c.notNull())
        .addColumn('created_at', type.timestamp, (c) => c.notNull())
        .addColumn('completed_at', type.timestamp)
        .execute();
      await db.schema
        .createIndex('webhook_recoveries_endpoint')
        .on('webhook_recoveries')
        .columns(['endpoint_id', 'id'])
        .execute();
      await db.schema
        .createIndex('webhook_recoveries_running')
        .on('webhook_recoveries')
        .column('stepped_at')
        .where(sql.ref('status'), '=', 'running')
        .execute();
      // A delivery a recovery queued (null for every other): the endpoint takes those one at a time, oldest first.
      await db.schema
        .alterTable('webhook_deliveries')
        .addColumn('recovery_id', type.key, (c) => c.references('webhook_recoveries.id').onDelete('set null'))
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_recovered')
        .on('webhook_deliveries')
        .column('endpoint_id')
        .where(sql.ref('state'), '=', 'pending')
        .where(sql.ref('recovery_id'), 'is not', null)
        .execute();
      // webhook_endpoint.failing: when the notice of the current failing period was sent (null: not yet).
      await db.schema.alterTable('webhook_endpoints').addColumn('failing_notice_at', type.timestamp).execute();
      // Pacing and a receiver's gateway: attempts per second across instances (null: none), headers every delivery
      // carries (JSON; null: none), and until when a 429 or 503 with Retry-After holds the endpoint's queue.
      await db.schema.alterTable('webhook_endpoints').addColumn('rate_limit', 'integer').execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('headers', 'text').execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('paused_until', type.timestamp).execute();
      // The delivery log shows the Retry-After honoured; the rate limit counts an endpoint's last second of attempts.
      await db.schema.alterTable('webhook_attempts').addColumn('retry_after_s', 'integer').execute();
      await db.schema
        .createIndex('webhook_attempts_endpoint_attempted')
        .on('webhook_attempts')
        .columns(['endpoint_id', 'attempted_at'])
        .execute();
    },
  },
  '0015_trace_context': {
    // Expand only: the W3C traceparent of the request that wrote an event (null when tracing was off), so that its
    // deliveries join that trace. The previous release writes events without it.
    // biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
    async up(db: Kysely<any>) {
      await db.schema.alterTable('events').addColumn('trace_parent', 'text').execute();
    },
  },
};

export const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * Applies every pending migration; throws with the failing migration's error. A database that a newer version
 * has migrated further (every migration this version knows is applied, and more) is left as it is and this
 * version runs on it, as Flyway ignores future migrations: so an instance of the previous version that restarts
 * during a rolling upgrade, or a rollback of the application, still starts. That holds because a release's
 * migrations only add to what the previous release reads (scripts/deploy/OPERATIONS.md "Upgrades and migrations"). Returns the migrations this
 * version does not know.
 */
export async function migrateToLatest(
  // biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema; kysely's Migrator takes Kysely<any>.
  db: Kysely<any>,
  {
    applied: onApplied,
    gaveWay,
  }: {
    applied?: (name: string, durationMs: number) => void;
    /** A try that met a table locked past MIGRATION_LOCK_WAIT_MS and was rolled back, to be tried again. */
    gaveWay?: (attempt: number) => void;
  } = {},
): Promise<{ newer: string[] }> {
  const known = Object.keys(migrations);
  const applied = await appliedMigrations(db);
  const newer = applied.filter((name) => !known.includes(name));
  if (newer.length > 0) {
    const missing = known.filter((name) => !applied.includes(name));
    if (missing.length === 0) return { newer };
    throw new Error(
      `The database has migrations this version does not know (${newer.join(', ')}) and lacks some it does ` +
        `(${missing.join(', ')}): it was migrated by a version that is neither older nor newer than this one.`,
    );
  }
  // Each migration timed as it runs; told once all committed (they run in one transaction where the engine can).
  const durations = new Map<string, number>();
  // Whether this try gives way to a table in use (PostgreSQL: below).
  let waitBriefly = true;
  const timed: MigrationProvider = {
    getMigrations: async () =>
      Object.fromEntries(
        Object.entries(migrations).map(([name, migration]) => [
          name,
          {
            // biome-ignore lint/suspicious/noExplicitAny: a migration runs on any schema.
            async up(on: Kysely<any>) {
              const started = performance.now();
              if (waitBriefly && engineOf(on) === 'postgres') {
                await sql.raw(`set local lock_timeout = '${MIGRATION_LOCK_WAIT_MS}ms'`).execute(on);
              }
              await migration.up(on);
              durations.set(name, Math.round(performance.now() - started));
            },
          },
        ]),
      ),
  };
  // On PostgreSQL each try waits at most MIGRATION_LOCK_WAIT_MS for a table's lock, then rolls back and gives way,
  // so that the serving instances' statements never queue behind a migration for longer than that (their own
  // lock_timeout would answer 503); the last try waits as long as the connection allows.
  let outcome = await new Migrator({ db, provider: timed }).migrateToLatest();
  const postgres = engineOf(db) === 'postgres';
  for (
    let attempt = 1;
    postgres && outcome.error && lockedOut(outcome.error) && attempt <= MIGRATION_LOCK_TRIES;
    attempt++
  ) {
    gaveWay?.(attempt);
    durations.clear();
    await new Promise((resolve) => setTimeout(resolve, Math.min(attempt * 100, 1_000)));
    waitBriefly = attempt < MIGRATION_LOCK_TRIES;
    outcome = await new Migrator({ db, provider: timed }).migrateToLatest();
  }
  const { error, results } = outcome;
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    // No migration ran: the database could not be used at all (missing, unreachable); its own error says why.
    if (failed === undefined) throw error;
    throw new Error(`Database migration ${failed} failed: ${error instanceof Error ? error.message : error}`, {
      cause: error,
    });
  }
  for (const result of results ?? []) {
    if (result.status === 'Success') onApplied?.(result.migrationName, durations.get(result.migrationName) ?? 0);
  }
  return { newer: [] };
}

/** On PostgreSQL, the longest a migration waits for a table's lock before it rolls back to try again. */
export const MIGRATION_LOCK_WAIT_MS = 200;
/** Tries that give way before the last, which waits as the connection's lock_timeout allows (45.5 s of pauses). */
const MIGRATION_LOCK_TRIES = 50;

/** Whether a migration failed for a lock it did not get in time (lock_timeout), or a deadlock it was chosen for. */
const lockedOut = (error: unknown) => classify(error)?.kind === 'database-busy';

/** The names of the migrations applied to the database; none when it has no migration table yet. */
// biome-ignore lint/suspicious/noExplicitAny: see migrateToLatest.
export async function appliedMigrations(db: Kysely<any>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === DEFAULT_MIGRATION_TABLE)) return [];
  const rows = await db.selectFrom(DEFAULT_MIGRATION_TABLE).select('name').execute();
  return rows.map((row: { name: string }) => row.name);
}
