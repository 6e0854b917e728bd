// listAll: every record across page boundaries, one request per page, lazily, against the real server.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, type DomainListParams, type DomainSpaceClient } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';
import { type RecordingFetch, recordingFetch } from './recording-fetch.js';

let server: TestServer;
let api: DomainSpaceClient;
let sent: RecordingFetch;

beforeAll(async () => {
  server = await startServer();
  const { key } = await server.account();
  sent = recordingFetch();
  api = createClient({ baseUrl: server.apiUrl, apiKey: key, fetch: sent.fetch });
  for (let i = 1; i <= 23; i++) {
    await api.domains.create({ name: `${i % 2 ? 'shop' : 'blog'}-${i}.example.com` });
    await api.spaces.create({ name: `Space ${i}`, color: (i % 6) + 1 });
  }
});
afterAll(() => server.close());

/** The list requests sent while running fn, as their query parameters. */
async function listRequests(fn: () => Promise<unknown>) {
  const before = sent.requests.length;
  await fn();
  return sent.requests.slice(before).map((r) => Object.fromEntries(r.url.searchParams));
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const resources = [
  { resource: 'domains', path: '/api/v1/domains' },
  { resource: 'spaces', path: '/api/v1/spaces' },
] as const;

describe.each(resources)('$resource.listAll', ({ resource }) => {
  // Both resources share the list parameters; only their records differ.
  const listAll = (params?: DomainListParams): AsyncIterable<{ id: number }> => api[resource].listAll(params);

  test('23 records at per_page 10 arrive as 23 items from exactly 3 requests', async () => {
    let items: { id: number }[] = [];
    const requests = await listRequests(async () => {
      items = await collect(listAll({ per_page: 10 }));
    });
    expect(items).toHaveLength(23);
    expect(new Set(items.map((item) => item.id)).size).toBe(23);
    // Newest first, the contract's default order, unbroken across the page boundaries.
    expect(items.map((item) => item.id)).toEqual(items.map((item) => item.id).sort((a, b) => b - a));
    // By cursor: the first request starts the walk, each next one carries the cursor links.next gave.
    expect(requests.map(({ after, ...rest }) => rest)).toEqual([
      { per_page: '10' },
      { per_page: '10' },
      { per_page: '10' },
    ]);
    expect(requests[0]?.after).toBe('');
    expect(requests[1]?.after).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(new Set(requests.map((query) => query.after)).size).toBe(3);
  });

  test('without per_page it asks for 100 a page: one request here', async () => {
    const requests = await listRequests(() => collect(listAll()));
    expect(requests).toEqual([{ per_page: '100', after: '' }]);
  });

  test('a break after the first item stops the fetching: one request', async () => {
    const requests = await listRequests(async () => {
      for await (const item of listAll({ per_page: 10 })) {
        expect(item.id).toBeGreaterThan(0);
        break;
      }
    });
    expect(requests).toHaveLength(1);
  });

  test('nothing is fetched until the iteration starts', async () => {
    const requests = await listRequests(async () => {
      listAll({ per_page: 10 });
    });
    expect(requests).toHaveLength(0);
  });

  test('it starts at the page asked for, and goes on by page numbers', async () => {
    let items: unknown[] = [];
    const requests = await listRequests(async () => {
      items = await collect(listAll({ per_page: 10, page: 2 }));
    });
    expect(items).toHaveLength(13);
    expect(requests.map((query) => query.page)).toEqual(['2', '3']);
  });
});

describe('listAll with other parameters', () => {
  test('search and sorting are passed through to every page', async () => {
    let names: string[] = [];
    const requests = await listRequests(async () => {
      const all = await collect(api.domains.listAll({ search: 'shop', sort_by: 'name', sort: 'asc', per_page: 10 }));
      names = all.map((domain) => domain.name);
    });
    expect(names).toHaveLength(12);
    expect(names.every((name) => name.startsWith('shop-'))).toBe(true);
    expect(names).toEqual([...names].sort());
    expect(requests.map(({ after, ...rest }) => rest)).toEqual([
      { search: 'shop', sort_by: 'name', sort: 'asc', per_page: '10' },
      { search: 'shop', sort_by: 'name', sort: 'asc', per_page: '10' },
    ]);
  });

  test('an empty result ends after one request', async () => {
    let items: unknown[] = [];
    const requests = await listRequests(async () => {
      items = await collect(api.spaces.listAll({ search: 'no such space' }));
    });
    expect(items).toEqual([]);
    expect(requests).toHaveLength(1);
  });
});
