// GET /domains and GET /spaces with no parameters: newest first, 10 a page, page 1, full meta and links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../support/server.js';
import { ids, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe.each(resources)('$resource list defaults', (resource) => {
  it('lists the 10 newest records, by id descending, on page 1', async () => {
    const account = await server.account();
    const stored = await storeAll(
      resource,
      account,
      Array.from({ length: 12 }, (_, i) => `default-${i + 1}`),
    );
    const { status, page } = await resource.list(account);
    expect(status).toBe(200);
    expect(ids(page?.data)).toEqual(ids(stored).reverse().slice(0, 10));
    expect(page?.meta).toEqual({ current_page: 1, per_page: 10, total: 12, last_page: 2, from: 1, to: 10 });
    expect(page?.links).toEqual({
      first: `${resource.path}?page=1`,
      last: `${resource.path}?page=2`,
      prev: null,
      next: `${resource.path}?page=2`,
    });
  });

  it('answers the same to the defaults sent explicitly as to no parameters', async () => {
    const account = await server.account();
    await storeAll(
      resource,
      account,
      Array.from({ length: 11 }, (_, i) => `explicit-${i + 1}`),
    );
    const implicit = await resource.list(account);
    const explicit = await resource.list(account, {
      search: '',
      search_by: 'name',
      sort_by: 'id',
      sort: 'desc',
      per_page: 10,
      page: 1,
    });
    expect(explicit.status).toBe(200);
    expect(explicit.page?.data).toEqual(implicit.page?.data);
    expect(explicit.page?.meta).toEqual(implicit.page?.meta);
  });

  it('lists each record with the fields show gives it', async () => {
    const account = await server.account();
    const [record] = await storeAll(resource, account, ['fields-shape']);
    const { page } = await resource.list(account);
    const shown = await server.fetch(`${resource.path}/${record?.id}`, {
      headers: { Authorization: `Bearer ${account.key}` },
    });
    expect(page?.data).toEqual([(await shown.json()).data]);
  });

  it('answers an empty account with an empty page 1 of 1', async () => {
    const account = await server.account();
    const { status, page } = await resource.list(account);
    expect(status).toBe(200);
    expect(page?.data).toEqual([]);
    expect(page?.meta).toEqual({ current_page: 1, per_page: 10, total: 0, last_page: 1, from: null, to: null });
    expect(page?.links).toEqual({
      first: `${resource.path}?page=1`,
      last: `${resource.path}?page=1`,
      prev: null,
      next: null,
    });
  });
});
