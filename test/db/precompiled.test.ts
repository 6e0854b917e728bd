// Queries compiled once and run with each call's values (server/db/precompiled.ts): integer and string
// arguments land where the query uses them, every call gets its own values, and an argument the query does not
// use as a value is refused when it compiles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { foldText } from '../../server/db/listing.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { precompiled, precompiledOnAny } from '../../server/db/precompiled.js';

let db: Database;
const accounts: number[] = [];

beforeAll(async () => {
  db = openDatabase('sqlite::memory:');
  await migrateToLatest(db);
  const now = new Date().toISOString();
  for (const account of ['first', 'second']) {
    const { id } = await db
      .insertInto('accounts')
      .values({ name: account, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    accounts.push(Number(id));
    for (const name of ['Alpha', 'Beta', 'Alphabet']) {
      await db
        .insertInto('spaces')
        .values({
          account_id: Number(id),
          name: `${name} of ${account}`,
          name_key: foldText(`${name} of ${account}`),
          color: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
    }
  }
});

afterAll(async () => {
  await db.destroy();
});

describe('precompiled', () => {
  it("puts each call's integers and strings where the query uses them", async () => {
    const named = precompiled(db, (account: number, prefix: string, limit: number) =>
      db
        .selectFrom('spaces')
        .select('name')
        .where('account_id', '=', account)
        .where('name', 'like', prefix)
        .orderBy('id')
        .limit(limit),
    );
    const [first = 0, second = 0] = accounts;
    expect((await named(first, 'Alpha%', 10)).map((row) => row.name)).toEqual(['Alpha of first', 'Alphabet of first']);
    expect((await named(second, 'Beta%', 10)).map((row) => row.name)).toEqual(['Beta of second']);
    expect((await named(second, 'Alpha%', 1)).map((row) => row.name)).toEqual(['Alpha of second']);
    // A string that looks like nothing special, and one holding what a stand-in might: values, never SQL.
    expect(await named(first, "x' or 1=1 --", 10)).toEqual([]);
    expect(await named(first, '\u0000precompiled argument 1\u0000', 10)).toEqual([]);
  });

  it('refuses at its first call a build that uses an argument other than as a value', async () => {
    const sorted = precompiled(db, (account: number, column: string) =>
      db
        .selectFrom('spaces')
        .select('name')
        .where('account_id', '=', account)
        .orderBy(column === 'name' ? 'name' : 'id'),
    );
    await expect(sorted(accounts[0] ?? 0, 'name')).rejects.toThrow(/argument\(s\) 1 are not query values/);
  });
});

describe('precompiledOnAny', () => {
  it('runs one compiled query on the database and inside a transaction, each with its own values', async () => {
    const named = precompiledOnAny((on, account: number) =>
      on.selectFrom('spaces').select('name').where('account_id', '=', account).orderBy('id'),
    );
    const [first = 0, second = 0] = accounts;
    expect(await named(db, first)).toHaveLength(3);
    const inside = await db.transaction().execute(async (trx) => {
      await trx.deleteFrom('spaces').where('account_id', '=', second).where('name', '=', 'Beta of second').execute();
      return named(trx, second);
    });
    expect(inside.map((row) => row.name)).toEqual(['Alpha of second', 'Alphabet of second']);
  });
});
