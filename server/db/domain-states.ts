// Migration 0005: domain states. A name is no longer unique across the service: any number of accounts may
// claim it `pending`, at most one holds it `active` or `misconfigured` (a partial unique index), and an account
// has at most one domain of a name. Each domain gets its verification token and the columns of its checks.
import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { sqliteTriggers } from './counts-and-search.js';
import { columnTypes, engineOf } from './database.js';

// Frozen as this migration applied them (runtime code has its own, in server/domains/check-rules.ts and
// repository.ts): a migration is history, and must not change when the rules do.
/** The states that hold a name; the partial unique index lets one domain per name be in them. */
const HOLDING_STATES = ['active', 'misconfigured'] as const;

/** A new verification token: 128 random bits, URL-safe base64 (22 characters). */
const newVerificationToken = () => randomBytes(16).toString('base64url');

// biome-ignore lint/suspicious/noExplicitAny: a migration runs on the schema as it was.
export async function addDomainStates(db: Kysely<any>): Promise<void> {
  if (engineOf(db) === 'postgres') {
    // The column-level UNIQUE of migration 0001 made this constraint, under PostgreSQL's default name.
    await sql`alter table domains drop constraint domains_name_key`.execute(db);
    await addStateColumns(db);
  } else {
    await rebuildSqliteDomains(db);
  }
  await fillTokens(db);
  const holding = sql.join(HOLDING_STATES.map((state) => sql.lit(state)));
  await sql`create unique index domains_name_holder on domains (name) where status in (${holding})`.execute(db);
  await sql`create unique index domains_account_domain on domains (account_id, name)`.execute(db);
  // The scheduler's due checks, in order; domains that are not checked any more have no next_check_at.
  await sql`create index domains_next_check on domains (next_check_at) where next_check_at is not null`.execute(db);
  await db.schema.createIndex('domains_account_status').on('domains').columns(['account_id', 'status', 'id']).execute();
}

// Domains stored before states existed are active and "grandfathered", with their first check spread over the
// first hour (so that an upgrade does not send every check at once); see the guide's "Domain states".
// biome-ignore lint/suspicious/noExplicitAny: see above.
async function addStateColumns(db: Kysely<any>): Promise<void> {
  const type = columnTypes(db);
  const now = new Date().toISOString();
  const columns: Array<[string, typeof type.timestamp | 'text' | 'integer', boolean]> = [
    ['status', 'text', true],
    ['verification_token', 'text', false],
    ['state_since', type.timestamp, false],
    ['verified_at', type.timestamp, false],
    ['last_checked_at', type.timestamp, false],
    ['next_check_at', type.timestamp, false],
    ['claimed_elsewhere_at', type.timestamp, false],
    ['observation', 'text', false],
    ['verify_window_started_at', type.timestamp, false],
    ['verify_count', 'integer', true],
  ];
  for (const [name, columnType, notNull] of columns) {
    await db.schema
      .alterTable('domains')
      .addColumn(name, columnType, (c) => (notNull ? c.notNull().defaultTo(name === 'status' ? 'active' : 0) : c))
      .execute();
  }
  await db.updateTable('domains').set({ state_since: now }).execute();
  await spreadFirstChecks(db, now);
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
async function spreadFirstChecks(db: Kysely<any>, now: string): Promise<void> {
  const rows: Array<{ id: number }> = await db.selectFrom('domains').select('id').execute();
  const start = Date.parse(now);
  for (const row of rows) {
    const at = new Date(start + Math.floor(Math.random() * 3_600_000)).toISOString();
    await db.updateTable('domains').set({ next_check_at: at }).where('id', '=', row.id).execute();
  }
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
async function fillTokens(db: Kysely<any>): Promise<void> {
  const rows: Array<{ id: number }> = await db
    .selectFrom('domains')
    .select('id')
    .where('verification_token', 'is', null)
    .execute();
  for (const row of rows) {
    await db
      .updateTable('domains')
      .set({ verification_token: newVerificationToken() })
      .where('id', '=', row.id)
      .execute();
  }
}

/**
 * SQLite cannot drop the column-level UNIQUE on `name` (its autoindex belongs to the table), so the table is
 * rebuilt without it: same ids (the trigram index's rowids), then its indexes and triggers made again.
 */
// biome-ignore lint/suspicious/noExplicitAny: see above.
async function rebuildSqliteDomains(db: Kysely<any>): Promise<void> {
  const type = columnTypes(db);
  await db.schema
    .createTable('domains_rebuilt')
    .addColumn('id', type.key, type.id)
    .addColumn('account_id', type.key, (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', type.sortKey, (c) => c.notNull())
    .addColumn('index_page', 'text')
    .addColumn('not_found_page', 'text')
    .addColumn('created_at', type.timestamp, (c) => c.notNull())
    .addColumn('updated_at', type.timestamp, (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await sql`insert into domains_rebuilt (id, account_id, name, name_key, index_page, not_found_page, created_at,
    updated_at, version)
    select id, account_id, name, name_key, index_page, not_found_page, created_at, updated_at, version
    from domains`.execute(db);
  // Ids are never reused: the new table's counter continues the old one's (past deleted ids, too).
  // sqlite_sequence has no key on `name`: the copy's own row (made by the inserts above) is replaced by hand.
  await sql`delete from sqlite_sequence where name = 'domains_rebuilt'`.execute(db);
  await sql`insert into sqlite_sequence (name, seq)
    select 'domains_rebuilt', seq from sqlite_sequence where name = 'domains'`.execute(db);
  await sql`drop table domains`.execute(db);
  await sql`alter table domains_rebuilt rename to domains`.execute(db);
  await db.schema.createIndex('domains_account_id').on('domains').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('domains_account_name').on('domains').columns(['account_id', 'name_key', 'id']).execute();
  await sqliteTriggers(db, 'domains');
  await addStateColumns(db);
}
