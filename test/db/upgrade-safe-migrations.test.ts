// Every migration since the previous release (.ci/previous-release) only adds what that release can live with:
// its migrations, then the checkout's, applied to a fresh database, and the two schemas compared from the
// engine's own catalog (test/support/schema-compat.ts). An unsafe migration fails here before it lands; the
// checker's own rules are shown on made-up migrations, each in a transaction that is rolled back.
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { appliedMigrations, migrateToLatest } from '../../server/db/migrations.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { type Installed, installRelease, previousRelease } from '../support/previous-release.js';
import { type Schema, schemaOf, upgradeFindings } from '../support/schema-compat.js';

const release = previousRelease();
let installed: Installed;
let database: TestDatabase;
let db: Database;
let before: Schema;
let releaseMigrations: string[];

beforeAll(async () => {
  installed = installRelease(release);
  // The release's own modules open the database and migrate it, as an instance of it does at start.
  const module = (path: string) => import(/* @vite-ignore */ `${installed.dir}/server/db/${path}`);
  const previous = {
    ...((await module('database.ts')) as { openDatabase(url: string): Kysely<unknown> }),
    // biome-ignore lint/suspicious/noExplicitAny: the previous release's own signature.
    ...((await module('migrations.ts')) as { migrateToLatest(db: Kysely<any>): Promise<unknown> }),
  };
  database = await freshDatabase();
  const releaseDb = previous.openDatabase(database.url);
  try {
    await previous.migrateToLatest(releaseDb);
  } finally {
    await releaseDb.destroy();
  }
  db = openDatabase(database.url);
  releaseMigrations = await appliedMigrations(db);
  before = await schemaOf(db, engine);
}, 60_000);

afterAll(async () => {
  await db?.destroy();
  await database?.drop();
  installed?.remove();
});

/** Runs `change` in a transaction and rolls it back (DDL is transactional on both engines). */
async function rolledBack(change: (trx: Database) => Promise<void>): Promise<void> {
  const rollback = new Error('rollback');
  await db
    .transaction()
    .execute(async (trx) => {
      await change(trx);
      throw rollback;
    })
    .catch((error) => {
      if (error !== rollback) throw error;
    });
}

type Case = [
  name: string,
  statements: Partial<Record<'sqlite' | 'postgres' | 'both', string[]>>,
  finding: RegExp | null,
];

const CASES: Case[] = [
  ['a dropped column', { both: ['alter table api_keys drop column label'] }, /column api_keys\.label was dropped/],
  [
    'a renamed column',
    { both: ['alter table spaces rename column name to title'] },
    /column spaces\.name was dropped or renamed/,
  ],
  [
    'a retyped column',
    { postgres: ['alter table api_keys alter column label type varchar(40)'] },
    /api_keys\.label was retyped/,
  ],
  ['a dropped table', { both: ['drop table service_secrets'] }, /table service_secrets was dropped/],
  [
    'a dropped index',
    { both: ['drop index spaces_account_name'] },
    /index spaces\(account_id,name_key,id\)|index .*name_key.* was dropped/,
  ],
  [
    'a new NOT NULL column without a default',
    { postgres: ['alter table spaces add column owner text not null'] },
    /new column spaces\.owner is NOT NULL without a default/,
  ],
  [
    'a changed unique index (what 0005 did to ON CONFLICT (name))',
    { both: ['drop index domains_name_holder', 'create unique index domains_name_holder on domains (name)'] },
    /unique index .*name.* was dropped or changed/,
  ],
  [
    'a new unique index on a table the release writes',
    { both: ['create unique index spaces_one_name on spaces (account_id, name)'] },
    /new unique index .*account_id,name/,
  ],
  [
    'a new CHECK constraint on a table the release writes',
    { postgres: ['alter table spaces add constraint spaces_short check (length(name) < 50)'] },
    /new CHECK .* on spaces/,
  ],
  [
    "a new table's foreign key that blocks the release's deletes",
    { both: ['create table domain_notes (id integer primary key, domain_id integer references domains (id))'] },
    /domain_notes\(domain_id\) to domains is ON DELETE no action/,
  ],
  [
    'only additions: a table, a nullable column, a column with a default, an index',
    {
      both: [
        'create table domain_notes (id integer primary key, domain_id integer references domains (id) on delete cascade)',
        'alter table spaces add column note text',
        'alter table spaces add column rank integer not null default 0',
        'create index spaces_rank on spaces (rank)',
      ],
    },
    null,
  ],
];

describe('the upgrade-safety check', () => {
  const cases = CASES.filter(([, statements]) => statements.both ?? statements[engine]);
  it.each(cases)('on %s', async (_name, statements, finding) => {
    await rolledBack(async (trx) => {
      for (const statement of statements.both ?? statements[engine] ?? []) await sql.raw(statement).execute(trx);
      const unsafe = upgradeFindings(before, await schemaOf(trx, engine)).filter((f) => f.unsafe);
      if (finding === null) expect(unsafe.map((f) => f.message)).toEqual([]);
      else expect(unsafe.map((f) => f.message)).toContainEqual(expect.stringMatching(finding));
    });
  });
});

// Last: it migrates the database the cases above started from.
describe(`the migrations since release ${release.version}`, () => {
  it('only add what an instance of that release runs on', async () => {
    expect(Object.keys(before.tables)).toEqual(expect.arrayContaining(['accounts', 'api_keys', 'domains', 'spaces']));
    await migrateToLatest(db);
    const added = (await appliedMigrations(db)).filter((name) => !releaseMigrations.includes(name));
    const findings = upgradeFindings(before, await schemaOf(db, engine));
    console.log(
      `release ${release.version} (${release.commit.slice(0, 7)}), ${engine}: its ${releaseMigrations.length} ` +
        `migrations, then ${added.length} new (${added.join(', ') || 'none'}): ` +
        `${findings.filter((f) => f.unsafe).length} unsafe changes`,
      findings.map((f) => f.message),
    );
    expect(findings.filter((f) => f.unsafe).map((f) => f.message)).toEqual([]);
  });
});
