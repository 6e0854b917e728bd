// /api-keys: the calling key, the account's keys, and making, rotating and revoking keys through the API, never
// beyond the calling key (scopes, expiry, address ranges), with their events and no secret kept or shown twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noteExpiredKeys } from '../../server/accounts/key-expiry.js';
import { issueKey } from '../../server/accounts/keys.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { publicIdOf, secretOf } from '../support/api-keys.js';
import { apiClient, startServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const DAY = 86_400_000;

/** A key of `account` with these limits, and a JSON client for it. */
async function keyOf(account: string, options: Parameters<typeof issueKey>[2] = {}) {
  const { key } = await issueKey(server.db, account, options);
  return { key, id: publicIdOf(key), client: apiClient(server.apiUrl, key, 'json') };
}

/** A manager: spaces:write and api_keys:write, expiring in 30 days, from 127.0.0.0/8 only. */
const manager = (account: string) =>
  keyOf(account, {
    scopes: ['api_keys:write', 'spaces:write'],
    expiresAt: new Date(Date.now() + 30 * DAY),
    allowedIps: ['127.0.0.0/8'],
  });

const fieldsOf = (error: unknown) =>
  ((error as { errors?: Array<{ field: string }> }).errors ?? []).map((e) => e.field);

describe('GET /api-keys/current', () => {
  it('shows any valid key itself, without a scope, and never a secret or a hash', async () => {
    const reader = await keyOf('current', { scopes: ['spaces:read'], label: 'reader' });
    const { data, response } = await reader.client.GET('/api-keys/current');
    expect(response.status).toBe(200);
    expect(data?.data).toMatchObject({ id: reader.id, label: 'reader', scopes: ['spaces:read'], status: 'active' });
    const text = JSON.stringify(data);
    expect(text).not.toContain(secretOf(reader.key));
    expect(text).not.toMatch(/hash/i);
  });
});

describe('GET /api-keys', () => {
  it("lists the account's keys newest first past a page, finds them by label; an unscoped key reads them, mints none", async () => {
    const boss = await manager('listing');
    for (let i = 0; i < 11; i++) await keyOf('listing', { label: `k${i}` });
    await keyOf('listing-other');
    const seen: string[] = [];
    let page = await boss.client.GET('/api-keys', { params: { query: { per_page: 10 } } });
    seen.push(...(page.data?.data ?? []).map((key) => key.id));
    const next = page.data?.links.next;
    expect(next).toBeTruthy();
    const rest = await server.fetch(next as string, { headers: { Authorization: `Bearer ${boss.key}` } });
    seen.push(...((await rest.json()) as { data: Array<{ id: string }> }).data.map((key) => key.id));
    expect(seen.length).toBe(12);
    expect(seen.at(-1)).toBe(boss.id);
    const searched = await boss.client.GET('/api-keys', { params: { query: { search: 'K1' } } });
    expect(searched.data?.data.map((key) => key.label).sort()).toEqual(['k1', 'k10']);
    const none = await boss.client.GET('/api-keys', { params: { query: { search: '~ +nothing' } } });
    expect(none.data?.data).toEqual([]);
    // A key made without scopes reads keys, and may not make one.
    const unscoped = await keyOf('listing');
    page = await unscoped.client.GET('/api-keys', { params: { query: {} } });
    expect(page.response.status).toBe(200);
    const minted = await unscoped.client.POST('/api-keys', { body: {} });
    expect(minted.response.status).toBe(403);
  });
});

describe('POST /api-keys', () => {
  it("makes a key with the caller's own limits where the body leaves them out; its secret works, once", async () => {
    const boss = await manager('minting');
    const { data, response } = await boss.client.POST('/api-keys', { body: { label: 'child' } });
    expect(response.status).toBe(201);
    const child = data?.data;
    expect(child).toMatchObject({ label: 'child', scopes: ['api_keys:write', 'spaces:write'] });
    expect(child?.allowed_ips).toEqual(['127.0.0.0/8']);
    const own = await boss.client.GET('/api-keys/current');
    expect(child?.expires_at).toBe(own.data?.data.expires_at);
    const secret = data?.secret as string;
    expect(secret).toMatch(/^dss_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const itself = await apiClient(server.apiUrl, secret, 'json').GET('/api-keys/{id}', {
      params: { path: { id: 'current' } },
    });
    expect(itself.data?.data.id).toBe(child?.id);
    const row = await server.db
      .selectFrom('api_keys')
      .selectAll()
      .where('public_id', '=', child?.id ?? '')
      .executeTakeFirst();
    expect(JSON.stringify(row)).not.toContain(secretOf(secret));
  });

  it.each([
    ['scopes', { scopes: ['domains:read'] }],
    ['expires_at', { expires_at: new Date(Date.now() + 60 * DAY).toISOString() }],
    ['allowed_ips', { allowed_ips: ['10.0.0.0/8'] }],
    ['allowed_ips', { allowed_ips: ['0.0.0.0/0'] }],
  ])('refuses a key beyond the caller: 403 naming %s', async (field, body) => {
    const boss = await manager('escalation');
    const { error, response } = await boss.client.POST('/api-keys', { body: body as never });
    expect(response.status).toBe(403);
    expect((error as { type: string }).type).toBe('/problems/key-escalation');
    expect(fieldsOf(error)).toEqual([field]);
  });

  it('refuses a key that never expires to a caller that does, and a narrower one is fine', async () => {
    const boss = await manager('narrower');
    const { data, response } = await boss.client.POST('/api-keys', {
      body: {
        scopes: ['spaces:read'],
        allowed_ips: ['127.0.0.1'],
        expires_at: new Date(Date.now() + DAY).toISOString(),
      },
    });
    expect(response.status).toBe(201);
    expect(data?.data).toMatchObject({ scopes: ['spaces:read'], allowed_ips: ['127.0.0.1/32'] });
    const forever = await keyOf('narrower', { scopes: ['api_keys:write'], expiresAt: new Date(Date.now() + DAY) });
    const never = await forever.client.POST('/api-keys', { body: { scopes: ['api_keys:write'] } });
    expect(never.response.status).toBe(201);
    expect(Date.parse(never.data?.data.expires_at ?? '')).toBeLessThanOrEqual(Date.now() + DAY);
  });

  it.each([
    ['scopes', { scopes: ['domains:admin'] }],
    ['expires_at', { expires_at: '2001-01-01T00:00:00Z' }],
    ['expires_at', { expires_at: `${new Date().getUTCFullYear() + 11}-01-01T00:00:00Z` }],
    ['expires_at', { expires_at: '2027-02-30T00:00:00Z' }],
    ['allowed_ips', { allowed_ips: ['::ffff:10.0.0.0/8'] }],
    ['allowed_ips', { allowed_ips: ['127.0.0.1/8'] }],
    ['label', { label: 'ci\u0007job' }],
    ['label', { label: 'ci\u2028job' }],
  ])('answers 422 naming %s for %j', async (field, body) => {
    const boss = await manager('malformed');
    const { error, response } = await boss.client.POST('/api-keys', { body: body as never });
    expect(response.status).toBe(422);
    // An array's item is named by its place (scopes.0).
    expect(fieldsOf(error)[0]?.split('.')[0]).toBe(field);
  });

  it('replays an Idempotency-Key with the same key and secret null: no second key, no kept secret', async () => {
    const boss = await manager('replay');
    const send = () =>
      boss.client.POST('/api-keys', {
        body: { label: 'once' },
        params: { header: { 'Idempotency-Key': 'mint-once' } },
      });
    const first = await send();
    const again = await send();
    expect(first.response.status).toBe(201);
    expect(again.response.status).toBe(201);
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data?.data.id).toBe(first.data?.data.id);
    expect(again.data?.secret).toBeNull();
    const saved = await server.db.selectFrom('idempotency_keys').select('body').execute();
    expect(JSON.stringify(saved)).not.toContain(secretOf(first.data?.secret as string));
    const listed = await boss.client.GET('/api-keys', { params: { query: { per_page: 100 } } });
    expect(listed.data?.data.filter((key) => key.label === 'once').length).toBe(1);
  });
});

describe('POST /api-keys/{id}/rotate and DELETE /api-keys/{id}', () => {
  it('rotates with an overlap; of two rotations at once one makes the successor, the other is a 409', async () => {
    const boss = await manager('rotating');
    const worker = await keyOf('rotating', {
      scopes: ['spaces:read'],
      allowedIps: ['127.0.0.1/32'],
      expiresAt: new Date(Date.now() + DAY),
    });
    const rotateIt = () =>
      boss.client.POST('/api-keys/{id}/rotate', {
        params: { path: { id: worker.id } },
        body: { overlap: '1h' },
      });
    const [one, two] = await Promise.all([rotateIt(), rotateIt()]);
    expect([one.response.status, two.response.status].sort()).toEqual([200, 409]);
    const done = one.data ?? two.data;
    expect(done?.replaced).toMatchObject({ id: worker.id, status: 'rotating', replaced_by: done?.data.id });
    expect(done?.data).toMatchObject({ scopes: ['spaces:read'], allowed_ips: ['127.0.0.1/32'] });
    // The successor's secret works; the old key works beside it for the overlap.
    const successor = apiClient(server.apiUrl, done?.secret as string, 'json');
    expect((await successor.GET('/api-keys/current')).data?.data.id).toBe(done?.data.id);
    expect((await worker.client.GET('/api-keys/current')).data?.data.status).toBe('rotating');
    const rows = await server.db.selectFrom('api_keys').select('public_id').where('label', 'is', null).execute();
    expect(rows.filter((row) => row.public_id === done?.data.id).length).toBe(1);
  });

  it('refuses to rotate a key whose successor would exceed the caller, and a key of another account is 404', async () => {
    const boss = await manager('rotate-bounds');
    const wider = await keyOf('rotate-bounds', { scopes: ['domains:write'] });
    const refused = await boss.client.POST('/api-keys/{id}/rotate', {
      params: { path: { id: wider.id } },
      body: {},
    });
    expect(refused.response.status).toBe(403);
    const stranger = await keyOf('rotate-stranger', { scopes: ['spaces:read'] });
    const foreign = await boss.client.POST('/api-keys/{id}/rotate', {
      params: { path: { id: stranger.id } },
      body: {},
    });
    expect(foreign.response.status).toBe(404);
    const deleted = await boss.client.DELETE('/api-keys/{id}', { params: { path: { id: stranger.id } } });
    expect(deleted.response.status).toBe(404);
    expect((await stranger.client.GET('/api-keys/current')).response.status).toBe(200);
  });

  it('revokes: the key is refused from then on, and the events tell who did what, without a secret', async () => {
    const boss = await keyOf('revoking', { scopes: ['api_keys:write', 'events:read'] });
    const made = await boss.client.POST('/api-keys', { body: { label: 'short-lived', scopes: ['events:read'] } });
    const id = made.data?.data.id as string;
    const revoked = await boss.client.DELETE('/api-keys/{id}', { params: { path: { id: id } } });
    expect(revoked.response.status).toBe(204);
    const child = apiClient(server.apiUrl, made.data?.secret as string, 'json');
    // The cache of valid keys holds one for at most KEY_CACHE_TTL_MS: bounded polling, no sleep assertions.
    let status = 200;
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (await child.GET('/api-keys/current')).response.status;
      if (status !== 401) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(401);
    const again = await boss.client.DELETE('/api-keys/{id}', { params: { path: { id: id } } });
    expect(again.response.status).toBe(404);
    const { data } = await boss.client.GET('/events', { params: { query: { object_type: 'api_key', object_id: id } } });
    expect(data?.data.map((event) => event.type)).toEqual(['api_key.revoked', 'api_key.created']);
    expect(data?.data[0]?.cause.actor).toMatchObject({ type: 'api_key', key_id: boss.id });
    expect(JSON.stringify(data)).not.toContain(secretOf(made.data?.secret as string));
  });

  it('lets an endpoint take key events only by name, and only for a key that holds api_keys:read', async () => {
    const hooks = await keyOf('key-events', { scopes: ['webhooks:write'] });
    const body = { url: 'https://hooks.example.com/keys', enabled_events: ['api_key.created' as const] };
    const refused = await hooks.client.POST('/webhook-endpoints', { body });
    expect(refused.response.status).toBe(403);
    const reader = await keyOf('key-events', { scopes: ['webhooks:write', 'api_keys:read'] });
    const taken = await reader.client.POST('/webhook-endpoints', { body });
    expect(taken.response.status).toBe(201);
  });
});

describe('api_key.expired', () => {
  it('is written once for a key past its expiry, by the system', async () => {
    // Key events are the key records' (api_keys:read), as every event is its record's (events/read-scopes.ts).
    const reader = await keyOf('expiring', { scopes: ['events:read', 'api_keys:read'] });
    const gone = await keyOf('expiring', { scopes: ['spaces:read'], expiresAt: new Date(Date.now() - 1000) });
    expect(await noteExpiredKeys(server.db, webhookFanOut(server.webhooks))).toBeGreaterThanOrEqual(1);
    await noteExpiredKeys(server.db, webhookFanOut(server.webhooks));
    const { data } = await reader.client.GET('/events', { params: { query: { object_id: gone.id } } });
    expect(data?.data.map((event) => event.type)).toEqual(['api_key.expired']);
    expect(data?.data[0]?.cause.actor.type).toBe('system');
    expect(data?.data[0]?.data).toMatchObject({ object: { id: gone.id, status: 'expired' } });
  });
});
