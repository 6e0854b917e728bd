// The client's conditional requests against the real server: etagOf the records helpers return, getIfChanged
// (304), and ifMatch on update, replace and delete (412 as an ApiError), as the optimistic-update recipe uses them.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createClient, type DomainSpaceClient, etagOf } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;
let api: DomainSpaceClient;
beforeAll(async () => {
  server = await startServer();
  api = createClient({ baseUrl: server.apiUrl, apiKey: (await server.account()).key });
});
afterAll(() => server.close());

const ETAG = /^"\d+\.\d+"$/;

describe('etagOf', () => {
  test('gives the ETag of the version a helper returned, and none for list items', async () => {
    const created = await api.spaces.create({ name: 'Tagged' });
    expect(etagOf(created)).toMatch(ETAG);
    const read = await api.spaces.get(created.id);
    expect(etagOf(read)).toBe(etagOf(created));
    const changed = await api.spaces.update(created.id, { color: 2 });
    expect(etagOf(changed)).not.toBe(etagOf(created));
    const page = await api.spaces.list();
    expect(page.data.length).toBeGreaterThan(0);
    expect(etagOf(page.data[0] as object)).toBeUndefined();
  });
});

describe('getIfChanged', () => {
  test('is undefined while the copy is current, and the new version once it changed', async () => {
    const space = await api.spaces.create({ name: 'Watched' });
    await expect(api.spaces.getIfChanged(space.id, space)).resolves.toBeUndefined();
    await api.spaces.update(space.id, { color: 6 });
    const fresh = await api.spaces.getIfChanged(space.id, etagOf(space) ?? '');
    expect(fresh).toMatchObject({ id: space.id, color: 6 });
  });
});

describe('ifMatch', () => {
  test.each(['update', 'replace'] as const)(
    '%s with a stale ETag throws ApiError 412 and changes nothing',
    async (method) => {
      const domain = await api.domains.create({ name: `stale-${method}.example.com` });
      const latest = await api.domains.update(domain.id, { index_page: 'https://example.com/new' });
      const error = await api.domains[method](domain.id, { index_page: null }, { ifMatch: etagOf(domain) }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 412 });
      expect(await api.domains.get(domain.id)).toEqual(latest);
    },
  );

  test('delete with a stale ETag throws 412; with the current one it deletes', async () => {
    const space = await api.spaces.create({ name: 'Doomed' });
    const latest = await api.spaces.replace(space.id, { name: 'Doomed too' });
    await expect(api.spaces.delete(space.id, { ifMatch: etagOf(space) })).rejects.toMatchObject({ status: 412 });
    await api.spaces.delete(space.id, { ifMatch: etagOf(latest) });
    await expect(api.spaces.get(space.id)).rejects.toMatchObject({ status: 404 });
  });

  test('the optimistic-update recipe ends with every increment applied despite concurrent writers', async () => {
    const space = await api.spaces.create({ name: 'Counter 0' });
    // Each writer reads, computes the next name from what it read, and writes only if nobody wrote in between.
    async function increment(): Promise<void> {
      for (;;) {
        const current = await api.spaces.get(space.id);
        const next = `Counter ${Number(current.name.split(' ')[1]) + 1}`;
        try {
          await api.spaces.update(space.id, { name: next }, { ifMatch: etagOf(current) });
          return;
        } catch (error) {
          if (!(error instanceof ApiError && error.status === 412)) throw error;
        }
      }
    }
    await Promise.all(Array.from({ length: 6 }, increment));
    expect((await api.spaces.get(space.id)).name).toBe('Counter 6');
  });
});
