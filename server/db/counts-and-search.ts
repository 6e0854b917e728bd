// Migration 0004: what keeps a list's cost flat as an account grows. Per-account record counts kept by
// triggers in the writing transaction (so no write path can forget them), and a trigram index for substring
// search: FTS5 with the trigram tokenizer on SQLite, pg_trgm's GIN operator class on PostgreSQL.

import { type Kysely, sql } from 'kysely';
import { engineOf } from './database.js';

// The resources as of this migration: a later resource gets its counts and index in its own migration.
const LISTED = ['domains', 'spaces'] as const;

// biome-ignore lint/suspicious/noExplicitAny: a migration runs before the schema it creates exists.
export async function addCountsAndSearch(db: Kysely<any>): Promise<void> {
  const type = engineOf(db) === 'postgres' ? 'bigint' : 'integer';
  await sql`
    create table record_counts (
      account_id ${sql.raw(type)} not null references accounts (id) on delete cascade,
      resource text not null,
      total ${sql.raw(type)} not null,
      primary key (account_id, resource)
    )`.execute(db);
  // pg_trgm ships with PostgreSQL and is a trusted extension: the database's owner may create it.
  if (engineOf(db) === 'postgres') await sql`create extension if not exists pg_trgm`.execute(db);
  if (engineOf(db) === 'postgres') await postgresCounters(db);
  for (const table of LISTED) await countAndIndex(db, table);
}

/**
 * Counts and search for one resource table, from its current rows on: what a later resource's migration calls
 * after creating its table (migration 0004 created what every table shares).
 */
// biome-ignore lint/suspicious/noExplicitAny: see above.
export async function countAndIndex(db: Kysely<any>, table: string): Promise<void> {
  if (engineOf(db) === 'postgres') await postgres(db, table);
  else await sqlite(db, table);
  await sql`
    insert into record_counts (account_id, resource, total)
    select account_id, ${table}, count(*) from ${sql.table(table)} group by account_id`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
async function sqlite(db: Kysely<any>, table: string): Promise<void> {
  const t = sql.raw(table);
  const search = sql.raw(`${table}_search`);
  // Contentless: the index holds only trigrams; every hit is checked against the row's own name_key.
  await sql`create virtual table ${search} using fts5(
    name_key, content='', contentless_delete=1, tokenize='trigram case_sensitive 0')`.execute(db);
  await sql`insert into ${search} (rowid, name_key) select id, name_key from ${t}`.execute(db);
  await sqliteTriggers(db, table);
}

/** The triggers that keep a SQLite table's count and trigram index; also for a migration that rebuilds the table. */
// biome-ignore lint/suspicious/noExplicitAny: see above.
export async function sqliteTriggers(db: Kysely<any>, table: string): Promise<void> {
  const t = sql.raw(table);
  const search = sql.raw(`${table}_search`);
  await sql`create trigger ${sql.raw(`${table}_after_insert`)} after insert on ${t} begin
    insert into record_counts (account_id, resource, total) values (new.account_id, ${sql.lit(table)}, 1)
      on conflict (account_id, resource) do update set total = total + 1;
    insert into ${search} (rowid, name_key) values (new.id, new.name_key);
  end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_after_delete`)} after delete on ${t} begin
    update record_counts set total = total - 1 where account_id = old.account_id and resource = ${sql.lit(table)};
    delete from ${search} where rowid = old.id;
  end`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_after_rename`)} after update of name_key on ${t}
    when old.name_key is not new.name_key begin
    delete from ${search} where rowid = old.id;
    insert into ${search} (rowid, name_key) values (new.id, new.name_key);
  end`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
async function postgresCounters(db: Kysely<any>): Promise<void> {
  // Statement-level triggers with transition tables: one counter update per statement, however many rows
  // it writes (a row-level trigger would rewrite the same counter row once per row of a bulk insert).
  await sql`
    create function count_inserted() returns trigger language plpgsql as $$
    begin
      insert into record_counts (account_id, resource, total)
        select account_id, tg_table_name, count(*) from inserted group by account_id
        on conflict (account_id, resource) do update set total = record_counts.total + excluded.total;
      return null;
    end $$`.execute(db);
  await sql`
    create function count_deleted() returns trigger language plpgsql as $$
    begin
      update record_counts set total = total - gone.n
        from (select account_id, count(*) as n from deleted group by account_id) as gone
        where record_counts.account_id = gone.account_id and record_counts.resource = tg_table_name;
      return null;
    end $$`.execute(db);
}

// biome-ignore lint/suspicious/noExplicitAny: see above.
async function postgres(db: Kysely<any>, table: string): Promise<void> {
  await sql`create trigger ${sql.raw(`${table}_count_inserted`)} after insert on ${sql.raw(table)}
      referencing new table as inserted for each statement execute function count_inserted()`.execute(db);
  await sql`create trigger ${sql.raw(`${table}_count_deleted`)} after delete on ${sql.raw(table)}
      referencing old table as deleted for each statement execute function count_deleted()`.execute(db);
  await sql`create index ${sql.raw(`${table}_name_trigram`)} on ${sql.raw(table)}
      using gin (name_key gin_trgm_ops)`.execute(db);
}
