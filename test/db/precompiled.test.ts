// Queries compiled once and run with each call's values (server/db/precompiled.ts): integer and string
// arguments land where the query uses them, every call gets its own values, and an argument the query does not
// use as a value is refused when it compiles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { foldText } from '../../server/db/listing.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { updateOwned, VersionMismatchError } from '../../server/db/owned.js';
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

describe('updateOwned, its statements compiled once per shape', () => {
  it("applies each call's own values, versions and account, and falls back to a built query for a null", async () => {
    const [first = 0, second = 0] = accounts;
    const [row] = await db.selectFrom('spaces').selectAll().where('account_id', '=', first).orderBy('id').execute();
    const id = Number(row?.id);
    const renamed = await updateOwned(db, 'spaces', first, id, { name: 'One', name_key: 'one' }, [1]);
    expect(renamed).toMatchObject({ row: { name: 'One', version: 2 }, changed: true });
    // The same shape (name and name_key, one version) with other values: not the first call's.
    const again = await updateOwned(db, 'spaces', first, id, { name: 'Two', name_key: 'two' }, [2]);
    expect(again).toMatchObject({ row: { name: 'Two', version: 3 }, changed: true });
    // The same values again: nothing written, the version kept.
    const same = await updateOwned(db, 'spaces', first, id, { name: 'Two', name_key: 'two' }, [3]);
    expect(same).toMatchObject({ row: { name: 'Two', version: 3 }, changed: false });
    // A version the record is not at; another account's record; an If-Match of several versions.
    await expect(updateOwned(db, 'spaces', first, id, { name: 'Three', name_key: 'three' }, [1])).rejects.toThrow(
      VersionMismatchError,
    );
    expect(await updateOwned(db, 'spaces', second, id, { name: 'Three', name_key: 'three' }, [3])).toBeUndefined();
    const several = await updateOwned(db, 'spaces', first, id, { color: 5 }, [1, 2, 3]);
    expect(several).toMatchObject({ row: { color: 5, version: 4 }, changed: true });
  });

  it('builds the statements each time for a null (a cleared page), with the same answers', async () => {
    const [first = 0] = accounts;
    const now = new Date().toISOString();
    const { id } = await db
      .insertInto('domains')
      .values({
        account_id: first,
        name: 'pages.example',
        name_key: 'pages.example',
        index_page: 'https://pages.example/index.html',
        not_found_page: null,
        created_at: now,
        updated_at: now,
        status: 'active',
        verification_token: 'token',
        state_since: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const cleared = await updateOwned(db, 'domains', first, Number(id), { index_page: null }, 'any');
    expect(cleared).toMatchObject({ row: { index_page: null, version: 2 }, changed: true });
    expect(await updateOwned(db, 'domains', first, Number(id), { index_page: null }, 'any')).toMatchObject({
      changed: false,
    });
    const set = await updateOwned(db, 'domains', first, Number(id), { index_page: 'https://pages.example/' }, [2]);
    expect(set).toMatchObject({ row: { index_page: 'https://pages.example/', version: 3 }, changed: true });
  });
});
