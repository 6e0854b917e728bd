// Paging through lists of domains and spaces: page sizes, from/to, links that keep the other parameters,
// pages past the end and empty accounts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { getRaw, ids, type Listed, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** The query of a link as an object, for comparing links whatever the order of their parameters. */
function queryOf(link: string | null | undefined): Record<string, string> | null {
  if (link == null) return null;
  const url = new URL(link, 'http://host');
  return Object.fromEntries(url.searchParams);
}

describe.each(resources)('$resource pagination over 23 records', (resource) => {
  let account: TestAccount;
  /** Newest first, as the default order lists them. */
  let newestFirst: Listed[];

  beforeAll(async () => {
    account = await server.account();
    const stems = Array.from({ length: 23 }, (_, i) => `record-${i + 1}`);
    newestFirst = (await storeAll(resource, account, stems)).reverse();
  });

  it.each([
    { page: 1, from: 1, to: 10, prev: null, next: 2 },
    { page: 2, from: 11, to: 20, prev: 1, next: 3 },
    { page: 3, from: 21, to: 23, prev: 2, next: null },
  ])('serves page $page as records $from–$to', async ({ page, from, to, prev, next }) => {
    const { status, page: body } = await resource.list(account, { per_page: 10, page });
    expect(status).toBe(200);
    expect(ids(body?.data)).toEqual(ids(newestFirst.slice(from - 1, to)));
    expect(body?.meta).toEqual({ current_page: page, per_page: 10, total: 23, last_page: 3, from, to });
    expect(queryOf(body?.links.first)).toEqual({ per_page: '10', page: '1' });
    expect(queryOf(body?.links.last)).toEqual({ per_page: '10', page: '3' });
    expect(queryOf(body?.links.prev)).toEqual(prev === null ? null : { per_page: '10', page: String(prev) });
    expect(queryOf(body?.links.next)).toEqual(next === null ? null : { per_page: '10', page: String(next) });
  });

  it('reaches every record exactly once by following next links, and back by prev', async () => {
    const seen: number[] = [];
    const visited: string[] = [];
    let link: string | null = `${resource.path}?per_page=10`;
    while (link !== null) {
      visited.push(link);
      const { status, body } = await getRaw(server, account, link);
      expect(status).toBe(200);
      seen.push(...ids(body.data));
      link = body.links.next;
    }
    expect(seen).toEqual(ids(newestFirst));
    expect(visited).toHaveLength(3);

    const back: number[] = [];
    link = `${resource.path}?per_page=10&page=3`;
    while (link !== null) {
      const { body } = await getRaw(server, account, link);
      back.unshift(...ids(body.data));
      link = body.links.prev;
    }
    expect(back).toEqual(ids(newestFirst));
  });

  it('keeps search, sort and per_page in every link, and the links lead to the right pages', async () => {
    const params = { search: 'RECORD-', sort_by: 'name', sort: 'asc', per_page: 10 } as const;
    const { page } = await resource.list(account, { ...params, page: 2 });
    const kept = { search: 'RECORD-', sort_by: 'name', sort: 'asc', per_page: '10' };
    expect(queryOf(page?.links.first)).toEqual({ ...kept, page: '1' });
    expect(queryOf(page?.links.prev)).toEqual({ ...kept, page: '1' });
    expect(queryOf(page?.links.next)).toEqual({ ...kept, page: '3' });
    expect(queryOf(page?.links.last)).toEqual({ ...kept, page: '3' });
    for (const [link, target] of [
      [page?.links.first, 1],
      [page?.links.prev, 1],
      [page?.links.next, 3],
      [page?.links.last, 3],
    ] as const) {
      expect(new URL(link ?? '', 'http://host').pathname).toBe(resource.path);
      const followed = await getRaw(server, account, link ?? '');
      const direct = await resource.list(account, { ...params, page: target });
      expect(followed.body.meta.current_page).toBe(target);
      expect(followed.body.data).toEqual(direct.page?.data);
    }
  });

  it.each(['record', 'two words', 'R&D+100%=?#', 'ärger/\\'])(
    'encodes search %j in links so that following them searches the same',
    async (search) => {
      const direct = await resource.list(account, { search });
      const first = direct.page?.links.first ?? '';
      expect(queryOf(first)).toEqual({ search, page: '1' });
      const followed = await getRaw(server, account, first);
      expect(followed.status).toBe(200);
      expect({ data: followed.body.data, meta: followed.body.meta }).toEqual({
        data: direct.page?.data,
        meta: direct.page?.meta,
      });
    },
  );

  it('keeps an empty search in the links', async () => {
    const { page } = await resource.list(account, { search: '', page: 1 });
    expect(queryOf(page?.links.next)).toEqual({ search: '', page: '2' });
  });

  it.each([4, 100])('answers page %i, past the end, with 200, no data and true meta', async (pageNumber) => {
    const { status, page } = await resource.list(account, { page: pageNumber });
    expect(status).toBe(200);
    expect(page?.data).toEqual([]);
    expect(page?.meta).toEqual({
      current_page: pageNumber,
      per_page: 10,
      total: 23,
      last_page: 3,
      from: null,
      to: null,
    });
    expect(page?.links.next).toBeNull();
    expect(queryOf(page?.links.last)).toEqual({ page: '3' });
    expect(queryOf(page?.links.prev)).toEqual({ page: '3' });
  });

  it.each([
    { perPage: 10, lastPage: 3, onFirst: 10 },
    { perPage: 25, lastPage: 1, onFirst: 23 },
    { perPage: 50, lastPage: 1, onFirst: 23 },
    { perPage: 100, lastPage: 1, onFirst: 23 },
  ] as const)('accepts per_page=$perPage', async ({ perPage, lastPage, onFirst }) => {
    const { status, page } = await resource.list(account, { per_page: perPage });
    expect(status).toBe(200);
    expect(ids(page?.data)).toEqual(ids(newestFirst.slice(0, onFirst)));
    expect(page?.meta).toEqual({
      current_page: 1,
      per_page: perPage,
      total: 23,
      last_page: lastPage,
      from: 1,
      to: onFirst,
    });
  });
});

describe.each(resources)('$resource pagination of an empty account', (resource) => {
  it.each([1, 2])('answers page %i with last_page 1 and from/to null', async (pageNumber) => {
    const account = await server.account();
    const { status, page } = await resource.list(account, { page: pageNumber });
    expect(status).toBe(200);
    expect(page?.data).toEqual([]);
    expect(page?.meta).toEqual({
      current_page: pageNumber,
      per_page: 10,
      total: 0,
      last_page: 1,
      from: null,
      to: null,
    });
    expect(page?.links.next).toBeNull();
  });
});
