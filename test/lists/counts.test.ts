// meta.total comes from per-account counts kept by triggers in the writing transaction: it must equal a real
// count of the rows after many concurrent creates and deletes, for each account and each resource.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type ListedResource, resources } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

async function realCount(table: ListedResource['resource'], account: TestAccount): Promise<number> {
  const row = await server.db
    .selectFrom(table)
    .innerJoin('accounts', 'accounts.id', `${table}.account_id`)
    .where('accounts.name', '=', account.name)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function metaTotal(resource: ListedResource, account: TestAccount, params = {}): Promise<number | undefined> {
  const { status, page } = await resource.list(account, params);
  expect(status).toBe(200);
  return page?.meta.total;
}

/** Runs `tasks` with at most `width` of them in flight at once. */
async function inParallel<T>(tasks: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) {
        const at = next++;
        results[at] = await (tasks[at] as () => Promise<T>)();
      }
    }),
  );
  return results;
}

describe.each(resources)('$resource meta.total', (resource) => {
  it('starts at 0 and follows single creates and deletes', async () => {
    const account = await server.account();
    expect(await metaTotal(resource, account)).toBe(0);
    const stored = await resource.store(account, `counted-${resource.resource}-1`);
    await resource.store(account, `counted-${resource.resource}-2`);
    expect(await metaTotal(resource, account)).toBe(2);
    const gone = await account.client.DELETE(`/${resource.resource}/{id}` as '/spaces/{id}', {
      params: { path: { id: stored.id } },
    });
    expect(gone.response.status).toBe(204);
    expect(await metaTotal(resource, account)).toBe(1);
    // A delete that finds nothing changes nothing.
    await account.client.DELETE(`/${resource.resource}/{id}` as '/spaces/{id}', {
      params: { path: { id: stored.id } },
    });
    expect(await metaTotal(resource, account)).toBe(1);
    expect(await realCount(resource.resource, account)).toBe(1);
  });

  it('stays exact under 160 concurrent creates and deletes over HTTP, in two accounts at once', async () => {
    const accounts = [await server.account(), await server.account()];
    const prefix = `race-${resource.resource}-${Date.now()}`;
    // Some records to delete while the others are being created.
    const first = await inParallel(
      accounts.flatMap((account, a) =>
        Array.from({ length: 30 }, (_, i) => () => resource.store(account, `${prefix}-${a}-old-${i}`)),
      ),
      16,
    );
    const deletions = first.map((record, i) => async () => {
      const account = accounts[i < 30 ? 0 : 1] as TestAccount;
      // Each is deleted twice at once: one of the two deletes finds it, the other must not count it again.
      const path = `/${resource.resource}/{id}` as '/spaces/{id}';
      const answers = await Promise.all([
        account.client.DELETE(path, { params: { path: { id: record.id } } }),
        account.client.DELETE(path, { params: { path: { id: record.id } } }),
      ]);
      return answers.map((answer) => answer.response.status).sort();
    });
    const creations = accounts.flatMap((account, a) =>
      Array.from({ length: 50 }, (_, i) => async () => {
        await resource.store(account, `${prefix}-${a}-new-${i}`);
        return [201];
      }),
    );
    // Interleaved: a delete, a create, a create, ...
    const tasks = creations.flatMap((create, i) => (deletions[i] ? [deletions[i], create] : [create]));
    const statuses = await inParallel(tasks, 16);
    expect(statuses.filter((s) => s.length === 2)).toEqual(Array(60).fill([204, 404]));

    for (const account of accounts) {
      expect(await realCount(resource.resource, account)).toBe(50);
      expect(await metaTotal(resource, account)).toBe(50);
      expect(await metaTotal(resource, account, { per_page: 100 })).toBe(50);
    }
  }, 60_000);

  it('counts what the account holds, not what the table holds', async () => {
    const [one, two] = [await server.account(), await server.account()];
    await resource.store(one, `mine-${resource.resource}-${Date.now()}`);
    expect(await metaTotal(resource, one)).toBe(1);
    expect(await metaTotal(resource, two)).toBe(0);
  });
});

describe('the counts a migration starts from', () => {
  it('are kept by the database itself, so a write that bypasses the service is counted too', async () => {
    const account = await server.account();
    const { id } = await server.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', account.name)
      .executeTakeFirstOrThrow();
    const now = new Date().toISOString();
    await server.db
      .insertInto('spaces')
      .values(
        [1, 2, 3].map((i) => ({
          account_id: id,
          name: `direct ${i}`,
          name_key: `direct ${i}`,
          color: 1,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
    await sql`delete from spaces where account_id = ${id} and name = 'direct 2'`.execute(server.db);
    const { page } = await (resources[1] as ListedResource).list(account, { search: 'direct' });
    expect(page?.meta.total).toBe(2);
    expect(await metaTotal(resources[1] as ListedResource, account)).toBe(2);
  });
});
