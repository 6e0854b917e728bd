// Search through the trigram index (FTS5 on SQLite, pg_trgm on PostgreSQL) answers exactly what a scan
// would (each account here holds more than SCANNED_ACCOUNT_SIZE records, past which searches use the index): searches shorter than a trigram, text the index's query language would read as syntax, renames and
// deletes, Unicode folding, and both ways of reading the rows (few matches through the index, many by a walk).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type ListedResource, pastScanSize, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const spaces = resources[1] as ListedResource;

/** The names a search finds in the account, newest first, and the total it reports. */
async function found(resource: ListedResource, account: TestAccount, search: string) {
  const { status, page } = await resource.list(account, { search, per_page: 100 });
  expect(status).toBe(200);
  return { names: page?.data.map((r) => r.name), total: page?.meta.total };
}

describe('spaces search, what the index must not change', () => {
  let account: TestAccount;
  const names = [
    'ab',
    'abc',
    'xabcx',
    'a"b"c',
    'say "hi" now',
    'NEAR(a b)',
    'x AND y',
    'col:umn',
    'star*',
    '^caret',
    'Straße',
    'ﬁle', // the ligature "fi" folds to two letters
    'e\u0301te', // a combining accent
    'Zürich',
    '   spaced   out   ',
  ];
  beforeAll(async () => {
    account = await server.account();
    await storeAll(spaces, account, names);
    await pastScanSize(server, spaces, account);
  });

  it.each([
    // Shorter than a trigram: the account is scanned, with the same answer.
    {
      search: 'a',
      want: [
        'spaced   out',
        'Straße',
        '^caret',
        'star*',
        'x AND y',
        'NEAR(a b)',
        'say "hi" now',
        'a"b"c',
        'xabcx',
        'abc',
        'ab',
      ],
    },
    { search: 'ab', want: ['xabcx', 'abc', 'ab'] },
    { search: 'C', want: ['spaced   out', 'Zürich', '^caret', 'col:umn', 'a"b"c', 'xabcx', 'abc'] },
    { search: '"', want: ['say "hi" now', 'a"b"c'] },
    // Exactly a trigram, and longer.
    { search: 'abc', want: ['xabcx', 'abc'] },
    { search: 'XABCX', want: ['xabcx'] },
    // The FTS5 query language must not leak through: quotes, operators, columns, prefixes, carets.
    { search: '"b"', want: ['a"b"c'] },
    { search: '"hi"', want: ['say "hi" now'] },
    { search: 'NEAR(', want: ['NEAR(a b)'] },
    { search: 'x and y', want: ['x AND y'] },
    { search: 'AND', want: ['x AND y'] },
    { search: 'col:', want: ['col:umn'] },
    { search: 'ar*', want: ['star*'] },
    { search: 'sta*', want: [] },
    { search: '^ca', want: ['^caret'] },
    // Unicode folding, as before the index.
    { search: 'STRASSE', want: ['Straße'] },
    { search: 'straße', want: ['Straße'] },
    { search: 'FILE', want: ['ﬁle'] },
    { search: 'éte', want: ['e\u0301te'] },
    { search: 'ZÜRICH', want: ['Zürich'] },
    { search: 'zurich', want: [] },
    // White space is part of the substring.
    { search: 'd   o', want: ['spaced   out'] },
    { search: 'd o', want: [] },
  ])('search $search finds $want', async ({ search, want }) => {
    expect(await found(spaces, account, search)).toEqual({ names: want, total: want.length });
  });
});

describe.each(resources)('$resource search follows renames and deletes', (resource) => {
  it('finds a record by its new name only, and not after it is deleted', async () => {
    const account = await server.account();
    const [kept, gone] = await storeAll(resource, account, ['tracked-alpha', 'tracked-beta']);
    await pastScanSize(server, resource, account);
    if (resource.resource === 'spaces') {
      const renamed = await account.client.PATCH('/spaces/{id}', {
        params: { path: { id: kept?.id ?? 0 } },
        body: { name: 'renamed-gamma' },
      });
      expect(renamed.response.status).toBe(200);
      expect(await found(resource, account, 'alpha')).toEqual({ names: [], total: 0 });
      expect(await found(resource, account, 'GAMMA')).toEqual({ names: ['renamed-gamma'], total: 1 });
    }
    const path = `/${resource.resource}/{id}` as '/spaces/{id}';
    await account.client.DELETE(path, { params: { path: { id: gone?.id ?? 0 } } });
    expect(await found(resource, account, 'beta')).toEqual({ names: [], total: 0 });
    expect(await found(resource, account, 'tracked')).toMatchObject({ total: resource.resource === 'spaces' ? 0 : 1 });
  });
});

// With 257 records, "common" matches 60: its first page walks the account (cheaper than reading 60 matches, as
// 60² > 10 × 257), its later pages and "rare" read the matches through the index. Every page must be the same
// either way.
describe.each(resources)('$resource search, few matches and many', (resource) => {
  let account: TestAccount;
  const stems = Array.from(
    { length: 120 },
    (_, i) => `${i % 2 === 0 ? 'common' : 'other'}-${i}${i === 37 ? '-rare' : ''}`,
  );
  beforeAll(async () => {
    account = await server.account();
    // Another account's matches must not show or count.
    await storeAll(resource, await server.account(), ['common-elsewhere', 'x-rare-elsewhere']);
    await storeAll(resource, account, stems);
    await pastScanSize(server, resource, account);
  });

  it.each(['rare', 'common', 'COMMON-1', 'on-'])(
    'pages of %s are the right records in the right order',
    async (search) => {
      const expected = stems.filter((stem) => stem.includes(search.toLowerCase())).reverse();
      const seen: string[] = [];
      for (let page = 1; page <= Math.max(1, Math.ceil(expected.length / 10)); page++) {
        const { page: body } = await resource.list(account, { search, page });
        expect(body?.meta.total).toBe(expected.length);
        seen.push(...(body?.data.map((r) => r.name.replace(/\.example$/, '')) ?? []));
      }
      expect(seen).toEqual(expected);
      const byName = await resource.list(account, { search, sort_by: 'name', sort: 'asc', per_page: 100 });
      expect(byName.page?.data.map((r) => r.name.replace(/\.example$/, ''))).toEqual([...expected].sort());
    },
  );
});
