// Metadata on domains, spaces and webhook endpoints: set on store (JSON object or form `metadata[key]=value`),
// merged by an update (an empty value removes a key), returned on every read and in events, searched by exact key
// and value on lists; and each malformed key, value or count refused with a 422 naming `metadata[key]`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fieldsOf } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;

beforeAll(async () => {
  server = await startServer();
  alice = await server.account('alice');
  bob = await server.account('bob');
});
afterAll(() => server.close());

let names = 0;
const fresh = () => `meta-${++names}.example.com`;

/** A raw request with a body, for forms and JSON the typed client would not send (bad keys, NUL). */
async function send(account: TestAccount, method: string, path: string, body: string, type: 'form' | 'json') {
  const response = await server.fetch(`/api/v1${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${account.key}`,
      'Content-Type': type === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    },
    body,
  });
  return { status: response.status, body: await response.json() };
}

const list = async (account: TestAccount, pathAndQuery: string) => {
  const response = await server.fetch(`/api/v1${pathAndQuery}`, {
    headers: { Authorization: `Bearer ${account.key}` },
  });
  return { status: response.status, body: await response.json() };
};

describe('metadata on domains', () => {
  it('is set from a form and from JSON, merged by an update, and removed by an empty value', async () => {
    const form = await send(
      alice,
      'POST',
      '/domains',
      `name=${fresh()}&metadata%5Btenant%5D=t_1&metadata[plan]=pro&metadata[empty]=`,
      'form',
    );
    expect(form.status).toBe(201);
    expect(form.body.data.metadata).toEqual({ tenant: 't_1', plan: 'pro' });
    const json = await alice.json.POST('/domains', { body: { name: fresh(), metadata: { tenant: 't_2' } } });
    expect(json.data?.data.metadata).toEqual({ tenant: 't_2' });

    const id = form.body.data.id;
    const merged = await alice.client.PATCH('/domains/{id}', {
      params: { path: { id } },
      body: { metadata: { plan: '', region: 'eu-west', 'a.b-c_d': 'x' } },
    });
    expect(merged.data?.data.metadata).toEqual({ tenant: 't_1', region: 'eu-west', 'a.b-c_d': 'x' });
    const shown = await alice.client.GET('/domains/{id}', { params: { path: { id } } });
    expect(shown.data?.data.metadata).toEqual({ tenant: 't_1', region: 'eu-west', 'a.b-c_d': 'x' });
    // The same metadata again changes nothing: no new version.
    const again = await alice.json.PATCH('/domains/{id}', {
      params: { path: { id } },
      body: { metadata: { region: 'eu-west' } },
    });
    expect(again.response.headers.get('etag')).toBe(merged.response.headers.get('etag'));

    const events = await alice.client.GET('/events', { params: { query: { type: 'domain.updated', per_page: 100 } } });
    const updated = events.data?.data.find((event) => event.type === 'domain.updated' && event.data.object.id === id);
    expect(updated?.type === 'domain.updated' && updated.data.object.metadata).toEqual({
      tenant: 't_1',
      region: 'eu-west',
      'a.b-c_d': 'x',
    });
  });

  it('finds domains by exact key and value, with the filter in the links, and never another account’s', async () => {
    const tagged = [];
    for (let i = 0; i < 12; i++) {
      const { data } = await alice.json.POST('/domains', {
        body: { name: fresh(), metadata: { team: i % 2 === 0 ? 'blue' : 'blue ', batch: 'search' } },
      });
      tagged.push(data?.data.id ?? 0);
    }
    await bob.json.POST('/domains', { body: { name: fresh(), metadata: { team: 'blue', batch: 'search' } } });
    const blue = tagged.filter((_, i) => i % 2 === 0).reverse();
    const page = await list(alice, '/domains?metadata[team]=blue&metadata%5Bbatch%5D=search&per_page=10');
    expect(page.status).toBe(200);
    expect(page.body.data.map((d: { id: number }) => d.id)).toEqual(blue);
    expect(page.body.meta.total).toBe(6);
    const walk = await list(alice, '/domains?metadata[batch]=search&per_page=10&after=');
    expect(walk.body.data).toHaveLength(10);
    expect(walk.body.links.next).toMatch(/metadata%5Bbatch%5D=search/);
    const rest = await list(alice, walk.body.links.next.replace('/api/v1', ''));
    expect(rest.body.data.map((d: { id: number }) => d.id)).toEqual(tagged.slice(0, 2).reverse());
    const none = await list(alice, '/domains?metadata[team]=BLUE');
    expect(none.body.data).toEqual([]);
  });

  it.each([
    ['a key with a space', { 'bad key': 'x' }, ['body:metadata[bad key]']],
    ['a key of 41 characters', { ['k'.repeat(41)]: 'x' }, [`body:metadata[${'k'.repeat(41)}]`]],
    ['a value of 501 characters', { long: 'v'.repeat(501) }, ['body:metadata[long]']],
    ['a value that is not text', { n: 5 }, ['body:metadata[n]']],
    ['NUL in a value', { nul: 'a\u0000b' }, ['body:metadata[nul]']],
    ['an unpaired surrogate', { half: 'a\ud800' }, ['body:metadata[half]']],
    ['21 keys', Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])), ['body:metadata']],
    ['not an object', 'tenant', ['body:metadata']],
  ])('refuses %s with a 422 naming the key', async (_case, metadata, fields) => {
    const { status, body } = await send(alice, 'POST', '/domains', JSON.stringify({ name: fresh(), metadata }), 'json');
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual(fields);
  });

  it('refuses a form key that is not a metadata key, naming it', async () => {
    const { status, body } = await send(alice, 'POST', '/domains', `name=${fresh()}&metadata[a%20b]=x`, 'form');
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual(['body:metadata[a b]']);
  });

  it('refuses an update that would leave more than 20 keys, naming the keys that do not fit', async () => {
    const full = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`k${i}`, 'v']));
    const { data } = await alice.json.POST('/domains', { body: { name: fresh(), metadata: full } });
    const id = data?.data.id ?? 0;
    const { status, body } = await send(
      alice,
      'PATCH',
      `/domains/${id}`,
      JSON.stringify({ metadata: { k0: 'changed', extra1: 'v', extra2: 'v' } }),
      'json',
    );
    expect(status).toBe(422);
    expect(fieldsOf(body)).toEqual(['body:metadata[extra2]']);
    // Removing one makes room, in the same update.
    const fits = await alice.json.PATCH('/domains/{id}', {
      params: { path: { id } },
      body: { metadata: { k1: '', extra1: 'v', extra2: 'v' } },
    });
    expect(Object.keys(fits.data?.data.metadata ?? {})).toHaveLength(20);
  });

  it('refuses a malformed filter, naming the parameter', async () => {
    const bad = await list(alice, `/domains?metadata[bad%20key]=x&metadata[ok]=${'v'.repeat(501)}`);
    expect(bad.status).toBe(422);
    expect(fieldsOf(bad.body)).toEqual(['query:metadata[bad key]', 'query:metadata[ok]']);
  });
});

describe('routing filters without any routing target', () => {
  it('keeps every domain for no_target and none for another code', async () => {
    const all = await list(bob, '/domains?per_page=100');
    const noTarget = await list(bob, '/domains?routing=no_target&per_page=100');
    expect(noTarget.body.meta.total).toBe(all.body.meta.total);
    expect(noTarget.body.data.every((d: { routing: { code: string } }) => d.routing.code === 'no_target')).toBe(true);
    expect((await list(bob, '/domains?routing=pointed,not_checked')).body.meta.total).toBe(0);
  });
});

describe('metadata on spaces', () => {
  it('is set, merged and searched as on domains', async () => {
    const created = await alice.client.POST('/spaces', { body: { name: 'Meta', metadata: { tenant: 't_9' } } });
    expect(created.data?.data.metadata).toEqual({ tenant: 't_9' });
    const id = created.data?.data.id ?? 0;
    const updated = await alice.client.PATCH('/spaces/{id}', {
      params: { path: { id } },
      body: { metadata: { tenant: '', plan: 'free' } },
    });
    expect(updated.data?.data.metadata).toEqual({ plan: 'free' });
    const found = await list(alice, '/spaces?metadata[plan]=free');
    expect(found.body.data.map((s: { id: number }) => s.id)).toEqual([id]);
    expect((await list(alice, '/spaces?metadata[tenant]=t_9')).body.data).toEqual([]);
  });
});

describe('metadata on webhook endpoints', () => {
  it('is set on create, merged by an update and returned by reads', async () => {
    const created = await alice.json.POST('/webhook-endpoints', {
      body: { url: 'https://hooks.example.com/meta', enabled_events: ['*'], metadata: { tenant: 't_3' } },
    });
    expect(created.data?.data.metadata).toEqual({ tenant: 't_3' });
    const id = created.data?.data.id ?? 0;
    const updated = await alice.json.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id } },
      body: { metadata: { env: 'prod' } },
    });
    expect(updated.data?.data.metadata).toEqual({ tenant: 't_3', env: 'prod' });
    const listed = await alice.client.GET('/webhook-endpoints', {});
    expect(listed.data?.data.find((endpoint) => endpoint.id === id)?.metadata).toEqual({ tenant: 't_3', env: 'prod' });
    const bad = await send(
      alice,
      'PATCH',
      `/webhook-endpoints/${id}`,
      JSON.stringify({ metadata: { 'x/y': 'v' } }),
      'json',
    );
    expect(bad.status).toBe(422);
    expect(fieldsOf(bad.body)).toEqual(['body:metadata[x/y]']);
  });
});

describe('the client library with metadata and filters', () => {
  it('sends metadata in forms and JSON, and lists by metadata and status through listAll', async () => {
    const { createClient } = await import('../../client/src/index.js');
    for (const bodyEncoding of ['form', 'json'] as const) {
      const api = createClient({ baseUrl: server.apiUrl, apiKey: bob.key, bodyEncoding });
      const domain = await api.domains.create({ name: fresh(), metadata: { via: `client-${bodyEncoding}` } });
      expect(domain.metadata).toEqual({ via: `client-${bodyEncoding}` });
      const updated = await api.domains.update(domain.id, { metadata: { via: '', team: 'green' } });
      expect(updated.metadata).toEqual({ team: 'green' });
      const found = [];
      for await (const each of api.domains.listAll({ metadata: { team: 'green' }, status: 'pending,active' })) {
        found.push(each.id);
      }
      expect(found).toContain(domain.id);
      const space = await api.spaces.create({ name: 'Client', metadata: { k: 'v' } });
      expect((await api.spaces.list({ metadata: { k: 'v' } })).data.map((s) => s.id)).toContain(space.id);
    }
  });
});
