// Every list of the spec, read to its end through its own links.next: each GET whose 200 answer carries
// `links.next` (found in the spec, so a new list is walked without a line here, or fails until it can be filled),
// filled past a page, walked by raw links.next and by the client's listAll, with the default per_page and others,
// in every order the list can be sorted in, searched and filtered where it allows. Each walk must give the records
// of one page of 100 (no cursor involved), in the same order, each once. Events and deliveries were unreadable
// past their first page in 1.3.0 (422 invalid-cursor for the service's own cursor) and no test had walked them.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, type DomainSpaceClient } from '../../client/src/index.js';
import { issueKey } from '../../server/accounts/keys.js';
import type { Operation, Parameter, Schema } from '../../server/spec-model.js';
import { spec } from '../support/contract.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** Records of each kind made: more than two default pages (10) and one page of 25, fewer than one of 100. */
const MADE = 27;
/** The largest page: one such page holds every record of a list here, so it is the walk's reference. */
const WHOLE = 100;

const isList = (operation: Operation) => {
  const body = operation.responses['200']?.content['application/json'] as
    | { properties?: { links?: { properties?: Record<string, Schema> } } }
    | undefined;
  return operation.method === 'GET' && body?.properties?.links?.properties?.next !== undefined;
};
const LISTS = spec.model.operations.filter(isList);

type Item = { id: number | string };
type Query = Record<string, string>;

interface Walked {
  /** The list's path with its path parameters filled in, below the base path. */
  path: string;
  /** The client's walk of the list with these parameters. */
  listAll(api: DomainSpaceClient, query: Query): AsyncIterable<Item>;
}

let server: TestServer;
let receiver: Receiver;
let account: TestAccount;
let api: DomainSpaceClient;
let endpointId = 0;

/** How each list is read, by operation id: a list the spec gains fails below until it is added here. */
const WALKS: Record<string, () => Walked> = {
  spaces_list: () => ({ path: '/spaces', listAll: (client, query) => client.spaces.listAll(query) }),
  domains_list: () => ({ path: '/domains', listAll: (client, query) => client.domains.listAll(query) }),
  events_list: () => ({ path: '/events', listAll: (client, query) => client.events.listAll(query) }),
  'webhook-endpoints_deliveries': () => ({
    path: `/webhook-endpoints/${endpointId}/deliveries`,
    listAll: (client, query) => client.webhookEndpoints.deliveries(endpointId, query),
  }),
  'webhook-endpoints_recoveries': () => ({
    path: `/webhook-endpoints/${endpointId}/recoveries`,
    listAll: (client, query) => client.webhookEndpoints.recoveries(endpointId, query),
  }),
  'api-keys_list': () => ({ path: '/api-keys', listAll: (client, query) => client.apiKeys.listAll(query) }),
};

beforeAll(async () => {
  server = await startServer({ deliver: true, webhooks: { pollMs: 50 } });
  receiver = await startReceiver();
  account = await server.account();
  api = createClient({ baseUrl: server.apiUrl, apiKey: account.key });
  const { data } = await account.json.POST('/webhook-endpoints', {
    body: { url: receiver.url, enabled_events: ['*'] },
  });
  endpointId = data?.data.id ?? 0;
  // Two kinds of name, so that a search finds more than a page and fewer than all; every change is an event and
  // a delivery to the endpoint.
  for (let i = 1; i <= MADE; i++) {
    const word = i % 2 ? 'alpha' : 'beta';
    await api.spaces.create({ name: `${word} space ${i}`, color: (i % 6) + 1 });
    await api.domains.create({ name: `${word}-${i}.example.com` });
    await issueKey(server.db, account.name, { label: `${word} key ${i}` });
  }
  await receiver.until((received) => received.length >= 2 * MADE, 30_000);
  // Recoveries of the endpoint over windows that do not overlap (each recovers nothing: every event arrived).
  const now = Date.now();
  for (let i = 1; i <= MADE; i++) {
    const { response } = await account.json.POST('/webhook-endpoints/{id}/recover', {
      params: { path: { id: endpointId } },
      body: {
        since: new Date(now - (i + 1) * 60_000).toISOString(),
        until: new Date(now - i * 60_000).toISOString(),
      },
    });
    expect(response.status).toBe(202);
  }
  // Each attempt is recorded by the delivery job's next claim: the log is whole once it shows them all.
  const deliveries = `/webhook-endpoints/${endpointId}/deliveries`;
  await vi.waitFor(
    async () => {
      if ((await page(deliveries, {})).data.length < 2 * MADE) throw new Error('the delivery log is not whole yet');
    },
    { timeout: 30_000, interval: 100 },
  );
}, 90_000);
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** One page of a list (the whole list: per_page 100 unless the query says otherwise). */
async function page(path: string, query: Query): Promise<{ data: Item[]; links: { next: string | null } }> {
  const response = await server.fetch(`/api/v1${path}?${new URLSearchParams({ per_page: String(WHOLE), ...query })}`, {
    headers: { Authorization: `Bearer ${account.key}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

/** The records of a walk that follows links.next from the first page, as a client that knows nothing else would. */
async function walkLinks(path: string, query: Query): Promise<Item[]> {
  const items: Item[] = [];
  let next: string | null = `/api/v1${path}?${new URLSearchParams(query)}`;
  for (let pages = 0; next !== null; pages++) {
    expect(pages, `more pages than records: ${next}`).toBeLessThanOrEqual(WHOLE);
    const response = await server.fetch(next, { headers: { Authorization: `Bearer ${account.key}` } });
    const body = await response.json();
    expect(response.status, `${next}: ${JSON.stringify(body)}`).toBe(200);
    items.push(...body.data);
    next = body.links.next;
  }
  return items;
}

async function collect(items: AsyncIterable<Item>): Promise<Item[]> {
  const all: Item[] = [];
  for await (const item of items) all.push(item);
  return all;
}

const param = (operation: Operation, name: string): Parameter | undefined =>
  operation.queryParams.find((p) => p.name === name);
const valuesOf = (operation: Operation, name: string) => (param(operation, name)?.schema.enum as string[]) ?? [];

/** The parameters that choose what a list holds and in what order, each combination the list allows. */
function variants(operation: Operation): Query[] {
  const orders: Query[] = [{}];
  for (const sortBy of valuesOf(operation, 'sort_by')) {
    for (const sort of valuesOf(operation, 'sort')) orders.push({ sort_by: sortBy, sort });
  }
  const found: Query[] = param(operation, 'search') ? [{}, { search: 'alpha' }] : [{}];
  // Filters the spec lists values of (status, type): each value, walked below when it holds more than a page.
  const filters = operation.queryParams
    .filter((p) => p.schema.enum && !['sort_by', 'sort', 'per_page', 'search_by'].includes(p.name))
    .flatMap((p) => (p.schema.enum as string[]).map((value) => ({ [p.name]: value })));
  return [...orders.flatMap((order) => found.map((search) => ({ ...order, ...search }))), ...filters];
}

describe('the spec lists', () => {
  it('are found, and each has a walk here', () => {
    expect(LISTS.map((operation) => operation.id).sort()).toEqual(
      expect.arrayContaining([
        'api-keys_list',
        'domains_list',
        'events_list',
        'spaces_list',
        'webhook-endpoints_deliveries',
        'webhook-endpoints_recoveries',
      ]),
    );
    for (const operation of LISTS) expect(Object.keys(WALKS), `a walk for ${operation.id}`).toContain(operation.id);
  });
});

describe.each(LISTS.map((operation) => [operation.id, operation] as const))('%s', (_id, operation) => {
  it('reads to its end by links.next and by listAll, every record once and in order, past a page', async () => {
    const { path, listAll } = (WALKS[operation.id] as () => Walked)();
    let pastAPage = 0;
    for (const query of variants(operation)) {
      const whole = await page(path, query);
      expect(whole.links.next, `one page of ${WHOLE} holds ${path} ${JSON.stringify(query)}`).toBeNull();
      const ids = whole.data.map((item) => item.id);
      expect(new Set(ids).size).toBe(ids.length);
      // Filter values with few records are still walked: a walk of one page must end too.
      const sizes = [
        undefined,
        ...valuesOf(operation, 'per_page')
          .map(Number)
          .filter((n) => n < ids.length),
      ];
      for (const perPage of sizes) {
        const paged = perPage === undefined ? query : { ...query, per_page: String(perPage) };
        const what = `${path} ${JSON.stringify(paged)}`;
        expect(
          (await walkLinks(path, paged)).map((item) => item.id),
          `links.next of ${what}`,
        ).toEqual(ids);
        expect(
          (await collect(listAll(api, paged))).map((item) => item.id),
          `listAll of ${what}`,
        ).toEqual(ids);
        if (ids.length > (perPage ?? 10)) pastAPage++;
      }
    }
    // Not a vacuous walk: several walks crossed a page boundary.
    expect(pastAPage).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
