// The `search` list parameter on domains and spaces: a case-insensitive, Unicode-aware substring of the
// name, with %, _ and \ matching themselves, and meta counting only what matched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { ids, type Listed, type ListedResource, resources, storeAll } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface SearchCase {
  search: string;
  /** Stems of the records the search finds. */
  found: string[];
}

/**
 * Stores `stems` in a new account and returns a check that a search finds exactly the records of the
 * expected stems, newest first, with meta counting only them.
 */
async function searchable(resource: ListedResource, stems: string[]) {
  const account: TestAccount = await server.account();
  const records = await storeAll(resource, account, stems);
  const byStem = new Map(stems.map((stem, i) => [stem, records[i] as Listed]));
  return {
    records,
    async expectSearch({ search, found }: SearchCase) {
      const { status, page } = await resource.list(account, { search, per_page: 100 });
      expect(status).toBe(200);
      const expected = stems.filter((stem) => found.includes(stem)).map((stem) => byStem.get(stem));
      expect(page?.data.map((r) => r.name)).toEqual(expected.reverse().map((r) => r?.name));
      expect(page?.meta).toMatchObject({
        total: found.length,
        last_page: 1,
        from: found.length > 0 ? 1 : null,
        to: found.length > 0 ? found.length : null,
      });
    },
  };
}

describe.each(resources)('$resource search by substring', (resource) => {
  const stems = ['my-shop', 'Shopping', 'WORKSHOP', 'blog', 'news'];
  let check: Awaited<ReturnType<typeof searchable>>;
  beforeAll(async () => {
    check = await searchable(resource, stems);
  });

  it.each<SearchCase>([
    { search: 'SHOP', found: ['my-shop', 'Shopping', 'WORKSHOP'] },
    { search: 'shop', found: ['my-shop', 'Shopping', 'WORKSHOP'] },
    { search: 'sHoP', found: ['my-shop', 'Shopping', 'WORKSHOP'] },
    { search: 'kSho', found: ['WORKSHOP'] },
    { search: 'PING', found: ['Shopping'] },
    { search: 'y-s', found: ['my-shop'] },
    { search: 'blog', found: ['blog'] },
    { search: 'nothing-like-it', found: [] },
    { search: '', found: stems },
  ])('search $search finds $found', (searchCase) => check.expectSearch(searchCase));

  it('counts only the matches in meta and keeps the search in the links', async () => {
    const account = await server.account();
    const shops = Array.from({ length: 12 }, (_, i) => `counted-shop-${i + 1}`);
    const stored = await storeAll(resource, account, [...shops, 'counted-blog-1', 'counted-blog-2', 'counted-blog-3']);
    const shopIds = ids(stored.slice(0, 12)).reverse();

    const first = await resource.list(account, { search: 'SHOP' });
    expect(ids(first.page?.data)).toEqual(shopIds.slice(0, 10));
    expect(first.page?.meta).toEqual({ current_page: 1, per_page: 10, total: 12, last_page: 2, from: 1, to: 10 });
    expect(new URL(first.page?.links.next ?? '', 'http://host').searchParams.get('search')).toBe('SHOP');

    const second = await resource.list(account, { search: 'SHOP', page: 2 });
    expect(ids(second.page?.data)).toEqual(shopIds.slice(10));
    expect(second.page?.meta).toEqual({ current_page: 2, per_page: 10, total: 12, last_page: 2, from: 11, to: 12 });
    expect(second.page?.links.next).toBeNull();
  });
});

const UNICODE: Record<ListedResource['resource'], { stems: string[]; cases: SearchCase[] }> = {
  spaces: {
    stems: ['ärger', 'ÄRGER im Büro', 'Arger', 'Ærø'],
    cases: [
      { search: 'ÄRGER', found: ['ärger', 'ÄRGER im Büro'] },
      { search: 'ärger', found: ['ärger', 'ÄRGER im Büro'] },
      { search: 'Ärger', found: ['ärger', 'ÄRGER im Büro'] },
      { search: 'büro', found: ['ÄRGER im Büro'] },
      { search: 'ærø', found: ['Ærø'] },
      { search: 'arger', found: ['Arger'] },
    ],
  },
  // Internationalized host names are stored as punycode; search finds them by either form.
  domains: {
    stems: ['bücher', 'buecher', 'ärger', 'books'],
    cases: [
      { search: 'bücher', found: ['bücher'] },
      { search: 'BÜCHER', found: ['bücher'] },
      { search: 'xn--bcher', found: ['bücher'] },
      { search: 'ÄRGER', found: ['ärger'] },
      { search: 'ärger', found: ['ärger'] },
      { search: 'bu', found: ['buecher'] },
    ],
  },
};

describe.each(resources)('$resource search, Unicode-aware', (resource) => {
  const { stems, cases } = UNICODE[resource.resource];
  let check: Awaited<ReturnType<typeof searchable>>;
  beforeAll(async () => {
    check = await searchable(resource, stems);
  });

  it.each(cases)('search $search finds $found', (searchCase) => check.expectSearch(searchCase));

  if (resource.resource === 'spaces') {
    it('finds a precomposed umlaut from a search that writes it as a combining mark', () =>
      check.expectSearch({ search: 'A\u0308RGER', found: ['ärger', 'ÄRGER im Büro'] }));
  }

  if (resource.resource === 'domains') {
    it('stores the internationalized names it finds as punycode', () => {
      expect(check.records.map((r) => r.name)).toContain('xn--bcher-kva.example');
    });
  }
});

// Host names cannot hold %, _ or \: for domains, a search for them must find nothing rather than everything.
const LITERAL: Record<ListedResource['resource'], { stems: string[]; cases: SearchCase[] }> = {
  spaces: {
    stems: ['100% sure', '100 percent', 'snake_case', 'snakeXcase', 'back\\slash', 'backslash', 'plain'],
    cases: [
      { search: '%', found: ['100% sure'] },
      { search: '0%', found: ['100% sure'] },
      { search: '%%', found: [] },
      { search: '_', found: ['snake_case'] },
      { search: 'e_c', found: ['snake_case'] },
      { search: '\\', found: ['back\\slash'] },
      { search: 'k\\s', found: ['back\\slash'] },
      { search: '\\%', found: [] },
      { search: '\\_', found: [] },
    ],
  },
  domains: {
    stems: ['one-two', 'three-four'],
    cases: [
      { search: '%', found: [] },
      { search: '_', found: [] },
      { search: 'e_t', found: [] },
      { search: '\\', found: [] },
      { search: 'e-t', found: ['one-two'] },
    ],
  },
};

describe.each(resources)('$resource search, %, _ and \\ literal', (resource) => {
  const { stems, cases } = LITERAL[resource.resource];
  let check: Awaited<ReturnType<typeof searchable>>;
  beforeAll(async () => {
    check = await searchable(resource, stems);
  });

  it.each(cases)('search $search finds $found', (searchCase) => check.expectSearch(searchCase));
});
