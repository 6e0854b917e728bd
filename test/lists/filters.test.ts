// Domain lists filtered by state and by routing code (one value or several, comma-separated), combined with
// search, sorting, pages and cursors, links carrying the filters; an unknown value is a 422 naming the parameter.
// The states and codes are written by the service's own check (applyCheck) from observations, without DNS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE } from '../../server/domains/check-rules.js';
import type { RoutingCode } from '../../server/domains/routing-rules.js';
import { applyCheck, SCHEDULED_CAUSE } from '../../server/domains/states.js';
import { NO_SUBSCRIBER } from '../../server/events/outbox.js';
import { fieldsOf } from '../support/problems.js';
import { offlineDomainChecks, startServer, type TestAccount, type TestServer } from '../support/server.js';
import { getRaw, ids } from './fixtures.js';

const TARGETS = { cname: 'edge.platform.example', a: ['192.0.2.10'], aaaa: [] };
let server: TestServer;
let alice: TestAccount;
const byName: Record<string, number> = {};

/** Checks the domain as a lookup that saw `found` or `missing` and this routing code would. */
async function check(id: number, found: boolean, routing: RoutingCode) {
  const result = found
    ? { code: 'found' as const, message: 'found', values: [] }
    : { code: 'missing' as const, message: 'missing', values: [] };
  const observed = { cname: [], a: [], aaaa: [] };
  await applyCheck(
    server.db,
    id,
    { result, routing: { code: routing, message: routing, observed } },
    DEFAULT_SCHEDULE,
    new Date(),
    {
      cause: SCHEDULED_CAUSE,
      subscriber: NO_SUBSCRIBER,
      targets: TARGETS,
    },
  );
}

beforeAll(async () => {
  const checks = offlineDomainChecks();
  server = await startServer({
    domainChecks: { ...checks, routing: { targets: TARGETS, lookup: () => Promise.reject(new Error('not asked')) } },
  });
  alice = await server.account('alice');
  // name: [found, routing code]; others stay pending and not checked.
  const plan: Array<[string, boolean, RoutingCode | undefined]> = [
    ['shop-a', true, 'pointed'],
    ['shop-b', true, 'not_pointed'],
    ['shop-c', false, 'pointed'],
    ['blog-d', true, 'pointed'],
    ['shop-e', false, 'partly_pointed'],
    ['shop-f', false, undefined],
    ['shop-g', true, 'pointed'],
    ...Array.from({ length: 10 }, (_, i): [string, boolean, RoutingCode] => [`page-${i}`, false, 'lookup_failed']),
  ];
  for (const [stem, found, routing] of plan) {
    const { data } = await alice.client.POST('/domains', { body: { name: `${stem}.example.com` } });
    const id = data?.data.id ?? 0;
    byName[stem] = id;
    if (routing) await check(id, found, routing);
  }
});
afterAll(() => server.close());

const list = async (query: string) => {
  const { status, body } = await getRaw(server, alice, `/api/v1/domains?${query}`);
  expect(status, JSON.stringify(body)).toBe(200);
  return body;
};
const idsOf = (...stems: string[]) => stems.map((stem) => byName[stem]);

describe('domains_list filters', () => {
  it.each([
    ['status=active', ['shop-g', 'blog-d', 'shop-b', 'shop-a']],
    ['status=active,misconfigured', ['shop-g', 'blog-d', 'shop-b', 'shop-a']],
    ['status=pending&routing=pointed,not_checked', ['shop-f', 'shop-c']],
    ['routing=pointed', ['shop-g', 'blog-d', 'shop-c', 'shop-a']],
    ['routing=not_pointed,partly_pointed', ['shop-e', 'shop-b']],
    ['routing=not_checked', ['shop-f']],
    ['status=active&routing=pointed', ['shop-g', 'blog-d', 'shop-a']],
    ['status=active&routing=pointed&search=shop', ['shop-g', 'shop-a']],
    ['status=active&routing=pointed&sort_by=name&sort=asc', ['blog-d', 'shop-a', 'shop-g']],
  ])('keeps what %s asks for, with its total', async (query, stems) => {
    const page = await list(query);
    expect(ids(page.data)).toEqual(idsOf(...stems));
    expect(page.meta.total).toBe(stems.length);
    for (const domain of page.data as unknown as Array<{ status: string; routing: { code: string } }>) {
      const status = /status=([^&]+)/.exec(query)?.[1];
      const routing = /routing=([^&]+)/.exec(query)?.[1];
      if (status) expect(status.split(',')).toContain(domain.status);
      if (routing) expect(routing.split(',')).toContain(domain.routing.code);
    }
  });

  it('carries the filters in the links of pages and of a cursor walk', async () => {
    const expected = idsOf(...Array.from({ length: 10 }, (_, i) => `page-${9 - i}`), 'shop-e');
    const first = await list('routing=lookup_failed,partly_pointed&status=pending&per_page=10');
    expect(first.meta.total).toBe(11);
    expect(ids(first.data)).toEqual(expected.slice(0, 10));
    expect(first.links.next).toMatch(/routing=lookup_failed%2Cpartly_pointed/);
    expect(first.links.next).toMatch(/status=pending/);
    const second = await list(new URL(first.links.next ?? '', 'http://host').search.slice(1));
    expect(ids(second.data)).toEqual(expected.slice(10));

    const walked: number[] = [];
    let link: string | null = '/api/v1/domains?routing=lookup_failed,partly_pointed&per_page=10&after=';
    while (link) {
      const { status, body } = await getRaw(server, alice, link);
      expect(status, JSON.stringify(body)).toBe(200);
      walked.push(...ids(body.data));
      link = body.links.next;
      if (link) expect(link).toMatch(/routing=lookup_failed%2Cpartly_pointed/);
    }
    expect(walked).toEqual(expected);
  });

  it.each([
    ['status=pending,gone', ['query:status'], /gone\\" is not one/],
    ['routing=pointed,sideways', ['query:routing'], /sideways\\" is not one/],
    ['status=Active&routing=', ['query:routing', 'query:status'], /pending, active/],
  ])('refuses %s with 422 naming the parameter', async (query, fields, message) => {
    const { status, body } = await getRaw(server, alice, `/api/v1/domains?${query}`);
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual(fields);
    expect(JSON.stringify(body.errors)).toMatch(message);
  });
});
