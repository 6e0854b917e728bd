// The `sort_by` and `sort` list parameters on domains and spaces: by id or case-insensitively by name,
// ties broken by id in the same direction, and a stable order across pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { ids, insertNamed, type Listed, type ListedResource, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Every page of a list, in order, concatenated. */
async function allPages(
  resource: ListedResource,
  account: TestAccount,
  params: { sort_by: 'id' | 'name'; sort: 'asc' | 'desc' },
): Promise<Listed[]> {
  const first = await resource.list(account, { ...params, per_page: 10 });
  const records = [...(first.page?.data ?? [])];
  for (let page = 2; page <= (first.page?.meta.last_page ?? 1); page++) {
    records.push(...((await resource.list(account, { ...params, per_page: 10, page })).page?.data ?? []));
  }
  return records;
}

/**
 * Records named after `stems` as the service stores them (a domain `stem.example`), written straight into the
 * database in this order (ids rise with it): for the tests of paging, where the create path plays no part.
 */
async function seeded(resource: ListedResource, account: TestAccount, stems: string[]): Promise<Listed[]> {
  const names = stems.map((stem) => (resource.resource === 'domains' ? `${stem}.example` : stem));
  await insertNamed(server, resource, account, () => names);
  const table = resource.resource;
  const rows = await server.db
    .selectFrom(table)
    .innerJoin('accounts', 'accounts.id', `${table}.account_id`)
    .select([`${table}.id as id`, `${table}.name as name`])
    .where('accounts.name', '=', account.name)
    .orderBy(`${table}.id`)
    .execute();
  expect(rows.map((row) => row.name)).toEqual(names);
  return rows;
}

describe.each(resources)('$resource sort', (resource) => {
  let account: TestAccount;
  let stored: Listed[];
  beforeAll(async () => {
    account = await server.account();
    // Stored out of alphabetical order, so that id order and name order differ.
    stored = await storeAll(resource, account, ['cherry', 'apple', 'Banana']);
  });

  const [cherry, apple, banana] = [0, 1, 2];

  it.each([
    { params: {}, order: [banana, apple, cherry] },
    { params: { sort: 'desc' }, order: [banana, apple, cherry] },
    { params: { sort: 'asc' }, order: [cherry, apple, banana] },
    { params: { sort_by: 'id', sort: 'asc' }, order: [cherry, apple, banana] },
    { params: { sort_by: 'name' }, order: [cherry, banana, apple] },
    { params: { sort_by: 'name', sort: 'asc' }, order: [apple, banana, cherry] },
    { params: { sort_by: 'name', sort: 'desc' }, order: [cherry, banana, apple] },
  ] as const)('orders by $params', async ({ params, order }) => {
    const { status, page } = await resource.list(account, params);
    expect(status).toBe(200);
    expect(ids(page?.data)).toEqual(order.map((i) => stored[i]?.id));
  });

  it('sorts by name ignoring case ("apple", "Banana", "cherry")', async () => {
    const { page } = await resource.list(account, { sort_by: 'name', sort: 'asc' });
    expect(page?.data.map((r) => r.name.toLowerCase().replace(/\.example$/, ''))).toEqual([
      'apple',
      'banana',
      'cherry',
    ]);
  });

  it.each(['asc', 'desc'] as const)('pages through a name-sorted list, %s, with every record once', async (sort) => {
    const other = await server.account();
    const stems = Array.from({ length: 23 }, (_, i) => `${sort}-${String.fromCharCode(122 - ((i * 7) % 26))}-${i}`);
    const records = await seeded(resource, other, stems);
    const listed = await allPages(resource, other, { sort_by: 'name', sort });
    expect(ids(listed).sort((a, b) => a - b)).toEqual(ids(records));
    const names = listed.map((r) => r.name);
    const sorted = [...names].sort();
    expect(names).toEqual(sort === 'asc' ? sorted : sorted.reverse());
  });
});

describe('spaces sort with ties', () => {
  const spaces = resources.find((r) => r.resource === 'spaces') as ListedResource;

  it.each(['asc', 'desc'] as const)('breaks ties of the same name by id, %s', async (sort) => {
    const account = await server.account();
    const [same1, other, same2, same3] = await storeAll(spaces, account, ['Same', 'Other', 'same', 'SAME']);
    const { page } = await spaces.list(account, { sort_by: 'name', sort });
    const sameGroup = [same1, same2, same3].map((r) => r?.id);
    expect(ids(page?.data)).toEqual(sort === 'asc' ? [other?.id, ...sameGroup] : [...sameGroup.reverse(), other?.id]);
  });

  it.each(['asc', 'desc'] as const)(
    'pages through a name-sorted list full of duplicates, %s, with every record exactly once',
    async (sort) => {
      const account = await server.account();
      const names = Array.from({ length: 25 }, (_, i) => ['gamma', 'Alpha', 'beta'][i % 3] as string);
      const records = await seeded(spaces, account, names);
      const listed = await allPages(spaces, account, { sort_by: 'name', sort });
      expect(listed).toHaveLength(25);
      expect(new Set(ids(listed)).size).toBe(25);
      const direction = sort === 'asc' ? 1 : -1;
      const expected = [...records].sort(
        (a, b) => direction * (a.name.toLowerCase().localeCompare(b.name.toLowerCase()) || a.id - b.id),
      );
      expect(ids(listed)).toEqual(ids(expected));
    },
  );
});
