// GET /events' filters: since (inclusive) and until (exclusive), key_id, object_id with object_type naming its kind
// (or type an event type), combined with each other and with the cursor, which carries them past the first page; bad values are 422s
// naming the parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publicIdOf } from '../support/api-keys.js';
import { apiClient, startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let owner: TestAccount;
let helper: TestAccount;
let spaceIds: number[];
beforeAll(async () => {
  server = await startServer();
  owner = await server.account('filters');
  // A second key of the same account.
  helper = await server.account('filters');
  spaceIds = [];
  for (let i = 0; i < 13; i++) {
    const { data } = await owner.json.POST('/spaces', { body: { name: `Space ${i}`, color: 1 } });
    spaceIds.push(data?.data.id as number);
  }
  for (const id of spaceIds.slice(0, 12)) {
    await helper.json.PATCH('/spaces/{id}', { params: { path: { id } }, body: { color: 2 } });
  }
  await owner.json.POST('/domains', { body: { name: 'filters.example.com' } });
});
afterAll(() => server.close());

type Query = Record<string, string | number>;
type Event = { id: string; type: string; timestamp: string; cause: { actor: { key_id: string | null } } };

/** Every event the query matches, walked by links.next to the end, and the links followed. */
async function walk(account: TestAccount, query: Query): Promise<{ events: Event[]; links: string[] }> {
  const first = await account.client.GET('/events', { params: { query: { per_page: 10, ...query } as never } });
  if (!first.data) throw new Error(`GET /events answered ${first.response.status}`);
  const events: Event[] = [...(first.data.data as Event[])];
  const links: string[] = [];
  let next = first.data.links.next;
  while (next) {
    links.push(next);
    const response = await server.fetch(next, { headers: { Authorization: `Bearer ${account.key}` } });
    const page = (await response.json()) as { data: Event[]; links: { next: string | null } };
    expect(response.status).toBe(200);
    events.push(...page.data);
    next = page.links.next;
  }
  return { events, links };
}

const all = async () => (await walk(owner, { per_page: 100 })).events;

describe('GET /events filters', () => {
  it('key_id: the events of requests with that key, walked past a page with the filter kept', async () => {
    const { events, links } = await walk(owner, { key_id: publicIdOf(helper.key) });
    expect(events.length).toBe(12);
    expect(events.every((event) => event.cause.actor.key_id === publicIdOf(helper.key))).toBe(true);
    expect(links.length).toBe(1);
    expect(links[0]).toContain(`key_id=${publicIdOf(helper.key)}`);
  });

  it('since is inclusive and until exclusive, combined with type and the cursor', async () => {
    const everything = await all();
    const created = everything.filter((event) => event.type === 'space.created');
    const since = created[created.length - 2]?.timestamp as string;
    const until = everything[1]?.timestamp as string;
    const expected = everything.filter(
      (event) => event.type.startsWith('space.') && event.timestamp >= since && event.timestamp < until,
    );
    const { events } = await walk(owner, { since, until, object_type: 'space' });
    expect(events.map((event) => event.id)).toEqual(expected.map((event) => event.id));
    expect(events.some((event) => event.timestamp === since)).toBe(true);
    expect(events.some((event) => event.timestamp === until)).toBe(false);
  });

  it('takes a time in another zone as the same instant', async () => {
    const everything = await all();
    const at = new Date(everything[5]?.timestamp as string);
    const shifted = new Date(at.getTime() + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    const inUtc = await walk(owner, { since: at.toISOString(), per_page: 100 });
    const inZone = await walk(owner, { since: shifted, per_page: 100 });
    expect(inZone.events.map((event) => event.id)).toEqual(inUtc.events.map((event) => event.id));
  });

  it('object_id: the events of one record, of its kind when type names one', async () => {
    const id = spaceIds[3] as number;
    const { events } = await walk(owner, { object_id: String(id), object_type: 'space' });
    expect(events.map((event) => event.type)).toEqual(['space.updated', 'space.created']);
    const updates = await walk(owner, { object_id: String(id), type: 'space.updated' });
    expect(updates.events.length).toBe(1);
  });

  it("refuses a cursor followed under other filters, and another account's key sees none of these events", async () => {
    const { links } = await walk(owner, { key_id: publicIdOf(helper.key) });
    const altered = (links[0] as string).replace(`key_id=${publicIdOf(helper.key)}`, `key_id=${publicIdOf(owner.key)}`);
    const response = await server.fetch(altered, { headers: { Authorization: `Bearer ${owner.key}` } });
    expect(response.status).toBe(422);
    const stranger = await server.account('filters-stranger');
    const theirs = await walk(stranger, { key_id: publicIdOf(helper.key) });
    expect(theirs.events).toEqual([]);
  });

  it.each([
    ['since', { since: 'yesterday' }],
    ['since', { since: '2026-02-30T00:00:00Z' }],
    ['until', { until: '2026-11-22T09:00:00' }],
    ['until', { since: '2026-11-22T09:00:00Z', until: '2026-11-22T09:00:00Z' }],
    ['key_id', { key_id: 'ABCDEF012345' }],
    ['object_id', { object_id: '007' }],
    ['type', { type: 'space' }],
    ['object_type', { object_type: 'spaces' }],
  ])('answers 422 naming %s for %j', async (field, query) => {
    const client = apiClient(server.apiUrl, owner.key);
    const { error, response } = await client.GET('/events', { params: { query: query as never } });
    expect(response.status).toBe(422);
    expect((error as { errors: Array<{ field: string }> }).errors.map((e) => e.field)).toEqual([field]);
  });
});
