// A search matching more than FEW_MATCHES records is not counted to the end (that costs in proportion to its
// matches): `meta.total` is a lower bound, `meta.total_exact` is false, and the pages, links and a walk by
// `links.next` or by cursor still give every match once, in order. Up to FEW_MATCHES the total stays exact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { operations } from '../../generated/api.js';
import { FEW_MATCHES } from '../../server/db/listing.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { getRaw, insertNamed, type ListedResource, resources } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const MANY = FEW_MATCHES + 25;
const SOME = 30;

/** Adds `count` records named `<stem>-<account>-<n>` straight into the database, ids rising with n. */
function insertStem(resource: ListedResource, account: TestAccount, stem: string, count: number) {
  return insertNamed(server, resource, account, (id) =>
    Array.from({ length: count }, (_, k) =>
      resource.resource === 'spaces' ? `${stem}-${id}-${k}` : `${stem}-${id}-${k}.example`,
    ),
  );
}

describe.each(resources)('$resource search with more than FEW_MATCHES matches', (resource) => {
  let account: TestAccount;
  beforeAll(async () => {
    account = await server.account();
    await insertStem(resource, account, 'many', MANY);
    await insertStem(resource, account, 'some', SOME);
  });

  it('answers a lower bound for the total, says so, and links the next page', async () => {
    const { status, page } = await resource.list(account, { search: 'many-' });
    expect(status).toBe(200);
    expect(page?.meta).toMatchObject({ current_page: 1, total_exact: false, from: 1, to: 10 });
    expect(page?.meta.total).toBeGreaterThan(FEW_MATCHES);
    expect(page?.meta.total).toBeLessThanOrEqual(MANY);
    expect(
      page?.data.map((r) =>
        r.name
          .replace(/\.example$/, '')
          .split('-')
          .at(-1),
      ),
    ).toEqual(Array.from({ length: 10 }, (_, i) => String(MANY - 1 - i)));
    expect(page?.links.next).toContain('page=2');
  });

  it('counts to the end of a deep page, and ends its links at the last match', async () => {
    const last = Math.ceil(MANY / 100);
    const deep = await resource.list(account, { search: 'many-', per_page: 100, page: last - 1 });
    expect(deep.page?.meta).toMatchObject({ total_exact: false, last_page: last });
    expect(deep.page?.meta.total).toBe((last - 1) * 100 + 1);
    expect(deep.page?.links.next).toContain(`page=${last}`);
    const end = await resource.list(account, { search: 'many-', per_page: 100, page: last });
    expect(end.page?.data).toHaveLength(MANY - (last - 1) * 100);
    expect(end.page?.meta).toMatchObject({ total: MANY, total_exact: false, last_page: last, to: MANY });
    expect(end.page?.links.next).toBeNull();
    const past = await resource.list(account, { search: 'many-', per_page: 100, page: last + 1 });
    expect(past.page?.data).toEqual([]);
    expect(past.page?.links.next).toBeNull();
  });

  it('gives every match once to a cursor walk', async () => {
    const seen = new Set<string>();
    let path: string | null = `${resource.path}?search=many-&per_page=100&sort_by=name&sort=asc&after=`;
    let pages = 0;
    while (path !== null && pages <= MANY / 100 + 1) {
      const { status, body } = await getRaw(server, account, path);
      expect(status).toBe(200);
      expect(body.meta.total_exact).toBe(false);
      expect(body.meta.total).toBeGreaterThanOrEqual(
        Math.min(MANY, seen.size + body.data.length + (body.links.next ? 1 : 0)),
      );
      for (const record of body.data) seen.add(record.name);
      path = body.links.next;
      pages += 1;
    }
    expect(seen.size).toBe(MANY);
  });

  it('keeps the total exact, and says nothing of it, up to FEW_MATCHES matches', async () => {
    const { page } = await resource.list(account, { search: 'some-' });
    expect(page?.meta.total).toBe(SOME);
    expect(page?.meta).not.toHaveProperty('total_exact');
  });
});

// A filter is counted as a search is: up to FEW_MATCHES exactly, past it as a lower bound (the count would cost in
// proportion to the records the filter keeps).
describe('domains filtered to more than FEW_MATCHES records', () => {
  const domains = resources[0] as ListedResource;
  let account: TestAccount;
  const filteredList = async (query: NonNullable<operations['domains_list']['parameters']['query']>) => {
    const { data, response } = await account.client.GET('/domains', { params: { query } });
    return { status: response.status, page: data };
  };
  beforeAll(async () => {
    account = await server.account();
    await insertStem(domains, account, 'kept', MANY); // active: the column's default for rows inserted so
  });

  it('answers a lower bound for the total, says so, and pages to the last record', async () => {
    const first = await filteredList({ status: 'active' });
    expect(first.page?.meta).toMatchObject({ current_page: 1, total_exact: false, from: 1, to: 10 });
    expect(first.page?.meta.total).toBeGreaterThan(FEW_MATCHES);
    expect(first.page?.meta.total).toBeLessThanOrEqual(MANY);
    expect(first.page?.links.next).toContain('page=2');
    const last = Math.ceil(MANY / 100);
    const end = await filteredList({ status: 'active', per_page: 100, page: last });
    expect(end.page?.data).toHaveLength(MANY - (last - 1) * 100);
    expect(end.page?.meta).toMatchObject({ total: MANY, total_exact: false, to: MANY });
    expect(end.page?.links.next).toBeNull();
  });

  it('keeps the total exact where the filter keeps FEW_MATCHES or fewer', async () => {
    const { page } = await filteredList({ status: 'active', search: '-4999.' });
    expect(page?.meta.total).toBe(1);
    expect(page?.meta).not.toHaveProperty('total_exact');
    const none = await filteredList({ status: 'pending' });
    expect(none.page?.meta).toMatchObject({ total: 0 });
    expect(none.page?.meta).not.toHaveProperty('total_exact');
  });
});
