// A search's plan must not depend on statistics the service may not have: a database grown by the API has no
// sqlite_stat1 until `PRAGMA optimize` writes one, and a stale one after. Both queries a search of SQLite's
// trigram index runs must read the index first and fetch rows by id, with no statistics, and with them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { amongIdsQuery, foldText, indexedIdsQuery } from '../../server/db/listing.js';
import { migrateToLatest } from '../../server/db/migrations.js';

let dir: string;
let db: Database;
let accountId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-search-plan-'));
  db = openDatabase(`sqlite:${join(dir, 'db.sqlite')}`);
  await migrateToLatest(db);
  const now = new Date().toISOString();
  for (const name of ['planned', 'other']) {
    const { id } = await db
      .insertInto('accounts')
      .values({ name, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    accountId = Number(id);
    // Enough rows that walking an account's index would be a real cost for the planner to weigh.
    for (let start = 0; start < 3_000; start += 500) {
      const rows = Array.from({ length: 500 }, (_, k) => {
        const label = `${['alpha', 'omega'][(start + k) % 2]} team ${start + k}`;
        return {
          account_id: accountId,
          name: label,
          name_key: foldText(label),
          color: 1,
          created_at: now,
          updated_at: now,
        };
      });
      await db.insertInto('spaces').values(rows).execute();
    }
  }
});
afterAll(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

async function planOf(query: { compile(): CompiledQuery } | CompiledQuery): Promise<string[]> {
  const compiled = 'compile' in query ? query.compile() : query;
  const plan = await db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${compiled.sql}`, [...compiled.parameters]),
  );
  return plan.rows.map((row) => row.detail);
}

const statistics = {
  none: async () => {
    await sql`drop table if exists sqlite_stat1`.execute(db);
    await sql`analyze sqlite_schema`.execute(db); // reloads what the planner knows: nothing
  },
  gathered: async () => {
    await sql`analyze`.execute(db);
  },
};

describe.each(Object.keys(statistics) as Array<keyof typeof statistics>)('with %s statistics', (which) => {
  beforeAll(() => statistics[which]());

  it('a search reads the trigram index first, then each hit by its id', async () => {
    const ids = indexedIdsQuery('spaces', accountId, 'team 12', 5_001);
    const plan = await planOf(ids.compile(db));
    expect(plan[0]).toMatch(/^SCAN spaces_search VIRTUAL TABLE/);
    expect(plan.slice(1).join('\n')).toMatch(/SEARCH spaces USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(plan.join('\n')).not.toMatch(/spaces_account_(id|name)/);
    const { rows } = await ids.execute(db);
    expect(rows.length).toBe(111); // "team 12", "team 120".."team 129", "team 1200".."team 1299"
  });

  it.each([
    ['name_key', 'asc'],
    ['id', 'desc'],
  ] as const)('the page among the ids found reads those rows by id, sorted by %s', async (column, direction) => {
    const among = amongIdsQuery(db, 'spaces', accountId, [5_001, 5_003, 5_999])
      .selectAll()
      .orderBy(column, direction)
      .limit(10);
    const plan = await planOf(among);
    expect(plan.join('\n')).toMatch(/SEARCH spaces USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expect(plan.join('\n')).not.toMatch(/spaces_account_(id|name)/);
  });
});
