// Walking a list by cursor (`after`): every record exactly once in every order, links.next carrying the
// cursor, records created and deleted during the walk, and the 422s for a cursor that cannot be used.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { getRaw, ids, type Listed, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

function queryOf(link: string | null | undefined): Record<string, string> | null {
  return link == null ? null : Object.fromEntries(new URL(link, 'http://host').searchParams);
}

/** Follows links.next from `start`; returns the ids seen and the answers' bodies. */
async function walk(account: TestAccount, start: string) {
  const seen: number[] = [];
  const bodies = [];
  let link: string | null = start;
  while (link !== null) {
    const { status, body } = await getRaw(server, account, link);
    expect(status).toBe(200);
    seen.push(...ids(body.data));
    bodies.push(body);
    link = body.links.next;
    expect(bodies.length).toBeLessThan(50);
  }
  return { seen, bodies };
}

describe.each(resources)('$resource walk by cursor', (resource) => {
  let account: TestAccount;
  let records: Listed[];
  // Duplicated names, so that the name order needs the id to break ties.
  const stems = Array.from({ length: 23 }, (_, i) => `walk-${['b', 'a', 'c'][i % 3]}${i % 5 === 0 ? '' : `-${i}`}`);

  beforeAll(async () => {
    account = await server.account();
    records = await storeAll(
      resource,
      account,
      stems.map((stem, i) => (i % 5 === 0 ? `${stem}-dup${i}` : stem)),
    );
  });

  it('starts with after= and pages with the cursor links.next carries, with true meta', async () => {
    const { status, page } = await resource.list(account, { after: '', per_page: 10 });
    expect(status).toBe(200);
    expect(ids(page?.data)).toEqual(ids(records).reverse().slice(0, 10));
    expect(page?.meta).toEqual({ current_page: 1, per_page: 10, total: 23, last_page: 3, from: 1, to: 10 });
    expect(queryOf(page?.links.first)).toEqual({ per_page: '10', after: '' });
    expect(queryOf(page?.links.last)).toEqual({ per_page: '10', page: '3' });
    expect(page?.links.prev).toBeNull();
    const next = queryOf(page?.links.next);
    expect(Object.keys(next ?? {}).sort()).toEqual(['after', 'per_page']);
    expect(next?.after).toMatch(/^[A-Za-z0-9_-]+$/);

    const second = await resource.list(account, { after: next?.after ?? '', per_page: 10 });
    expect(ids(second.page?.data)).toEqual(ids(records).reverse().slice(10, 20));
    expect(second.page?.meta).toEqual({ current_page: 2, per_page: 10, total: 23, last_page: 3, from: 11, to: 20 });
    expect(queryOf(second.page?.links.prev)).toEqual({ per_page: '10', page: '1' });
  });

  it.each([
    { sort_by: 'id', sort: 'desc' },
    { sort_by: 'id', sort: 'asc' },
    { sort_by: 'name', sort: 'asc' },
    { sort_by: 'name', sort: 'desc' },
  ] as const)('reaches every record once, in the order pages give, by $sort_by $sort', async (order) => {
    const byPage = await resource.list(account, { ...order, per_page: 100 });
    const { seen, bodies } = await walk(
      account,
      `${resource.path}?sort_by=${order.sort_by}&sort=${order.sort}&per_page=10&after=`,
    );
    expect(seen).toEqual(ids(byPage.page?.data));
    expect(bodies).toHaveLength(3);
    expect(bodies.map((body) => [body.meta.from, body.meta.to])).toEqual([
      [1, 10],
      [11, 20],
      [21, 23],
    ]);
    expect(bodies.at(-1)?.links.next).toBeNull();
  });

  it('keeps the search through the walk and counts only the matches', async () => {
    const { seen, bodies } = await walk(account, `${resource.path}?search=WALK-A&per_page=10&after=`);
    const expected = records.filter((r) => r.name.startsWith('walk-a'));
    expect(seen).toEqual(ids(expected).reverse());
    expect(bodies[0]?.meta.total).toBe(expected.length);
  });

  it('neither repeats nor skips a record when others are created and deleted during the walk', async () => {
    const own = await server.account();
    const before = await storeAll(
      resource,
      own,
      Array.from({ length: 15 }, (_, i) => `moving-${i}`),
    );
    const first = await getRaw(server, own, `${resource.path}?per_page=10&after=`);
    // Newer records appear before the cursor, and a record of the first page goes away.
    await storeAll(resource, own, ['moving-new-1', 'moving-new-2']);
    const path = `/${resource.resource}/{id}` as '/spaces/{id}';
    await own.client.DELETE(path, { params: { path: { id: first.body.data[0]?.id ?? 0 } } });
    const rest = await walk(own, first.body.links.next ?? '');
    expect([...ids(first.body.data), ...rest.seen]).toEqual(ids(before).reverse());
  });

  it('answers an empty walk of an empty account', async () => {
    const empty = await server.account();
    const { page } = await resource.list(empty, { after: '' });
    expect(page?.data).toEqual([]);
    expect(page?.meta).toEqual({ current_page: 1, per_page: 10, total: 0, last_page: 1, from: null, to: null });
    expect(page?.links.next).toBeNull();
  });

  it.each([
    { query: 'page=1&after=', kind: 'page-with-cursor', fields: ['query:after', 'query:page'] },
    { query: 'page=2&after=WzFd', kind: 'page-with-cursor', fields: ['query:after', 'query:page'] },
    { query: 'after=not-a-cursor', kind: 'invalid-cursor', fields: ['query:after'] },
    { query: 'after=WyJpZCIsImRlc2MiLDEwXQ', kind: 'invalid-cursor', fields: ['query:after'] }, // no id
    { query: 'after=a%2Bb', kind: 'validation', fields: ['query:after'] }, // not the cursor's alphabet
  ])('rejects $query with the 422 $kind naming $fields', async ({ query, kind, fields }) => {
    const { status, body } = await getRaw(server, account, `${resource.path}?${query}`);
    expect(status).toBe(422);
    expect(body.type).toBe(`/problems/${kind}`);
    expect(fieldsOf(body)).toEqual(fields);
  });

  it('rejects a cursor sent with another sort than the walk it came from', async () => {
    const first = await resource.list(account, { sort_by: 'name', sort: 'asc', after: '' });
    const after = queryOf(first.page?.links.next)?.after ?? '';
    for (const other of [{ sort_by: 'id', sort: 'asc' }, { sort_by: 'name', sort: 'desc' }, {}] as Array<
      Record<string, string>
    >) {
      const { status, body } = await getRaw(
        server,
        account,
        `${resource.path}?${new URLSearchParams({ ...other, after })}`,
      );
      expect(status).toBe(422);
      expect(body.type).toBe('/problems/cursor-sort-mismatch');
      expect(fieldsOf(body)).toEqual(['query:after']);
      expect(body.errors?.[0]?.message).toContain('sort_by=name&sort=asc');
    }
  });
});
