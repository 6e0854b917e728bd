// Least privilege that holds: a write scope includes its read scope (what a write answers is never more than the
// key may read), and a webhook subscription is bounded by what the key may read: subscribing to a type needs the
// read scope of its records (`*` needs them all), re-pointing an endpoint too, and redelivery needs events:read
// and the record's read scope. Runs on both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { expectProblem } from '../support/problems.js';
import { apiClient, startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let owner: TestAccount;

beforeAll(async () => {
  server = await startServer();
  owner = await server.account('least-privilege');
});
afterAll(() => server.close());

const keyWith = async (...scopes: string[]) => (await issueKey(server.db, owner.name, { scopes })).key;
const post = (key: string, path: string, body: unknown) =>
  server.fetch(`/api/v1${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
const patch = (key: string, path: string, body: unknown) =>
  server.fetch(`/api/v1${path}`, {
    method: 'PATCH',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

describe('a write scope includes its read scope', () => {
  it('lets a spaces:write key read a space, and list spaces', async () => {
    const created = await owner.client.POST('/spaces', { body: { name: 'Readable', color: 3 } });
    const id = created.data?.data.id ?? 0;
    const writer = apiClient(server.apiUrl, await keyWith('spaces:write'));
    const shown = await writer.GET('/spaces/{id}', { params: { path: { id } } });
    expect(shown.response.status).toBe(200);
    expect(shown.data?.data.name).toBe('Readable');
    expect((await writer.GET('/spaces', {})).response.status).toBe(200);
  });

  it('does not let it read another resource', async () => {
    const writer = apiClient(server.apiUrl, await keyWith('spaces:write'));
    const listed = await writer.GET('/domains', {});
    expect(listed.response.status).toBe(403);
  });
});

describe('subscriptions bounded by what the key may read', () => {
  const receiver = 'http://127.0.0.1:9/hook';

  it.each([
    [['*'], 'domains:read and spaces:read'],
    [['space.created'], 'spaces:read'],
    [['domain.active', 'space.deleted'], 'domains:read and spaces:read'],
  ])('refuses %j to a key without read scopes, naming %s', async (events, named) => {
    const key = await keyWith('webhooks:write');
    const response = await post(key, '/webhook-endpoints', { url: receiver, enabled_events: events });
    const problem = await expectProblem(response, 403);
    expect(problem.type).toBe('/problems/insufficient-scope');
    expect(problem.detail).toContain(named);
    expect(response.headers.get('x-accepted-scopes')).toBe(named.replace(' and ', ', '));
  });

  it('serves space.created with spaces:read, and refuses * still', async () => {
    const key = await keyWith('webhooks:write', 'spaces:read');
    const ok = await post(key, '/webhook-endpoints', { url: receiver, enabled_events: ['space.created'] });
    expect(ok.status).toBe(201);
    const all = await post(key, '/webhook-endpoints', { url: receiver, enabled_events: ['*'] });
    const problem = await expectProblem(all, 403);
    expect(problem.detail).toContain('domains:read');
    expect(problem.detail).not.toContain('spaces:read and');
  });

  it('serves * with every read scope (a write scope counts as its read scope)', async () => {
    const key = await keyWith('webhooks:write', 'spaces:write', 'domains:read');
    const ok = await post(key, '/webhook-endpoints', { url: receiver, enabled_events: ['*'] });
    expect(ok.status).toBe(201);
  });

  it('refuses widening or re-pointing an endpoint beyond the key, and stores nothing of it', async () => {
    const made = await owner.json.POST('/webhook-endpoints', { body: { url: receiver, enabled_events: ['*'] } });
    const id = made.data?.data.id ?? 0;
    const narrow = await keyWith('webhooks:write', 'spaces:read');
    const repoint = await patch(narrow, `/webhook-endpoints/${id}`, { url: 'http://127.0.0.1:8/mine' });
    expect((await expectProblem(repoint, 403)).detail).toContain('domains:read');
    const widen = await post(narrow, '/webhook-endpoints', { url: receiver, enabled_events: ['space.created'] });
    const own = ((await widen.json()) as { data: { id: number } }).data.id;
    const wider = await patch(narrow, `/webhook-endpoints/${own}`, { enabled_events: ['*'] });
    await expectProblem(wider, 403);
    // A description alone is no new subscription.
    expect((await patch(narrow, `/webhook-endpoints/${id}`, { description: 'noted' })).status).toBe(200);
    const stored = await owner.json.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
    expect(stored.data?.data.url).toBe(receiver);
    const kept = await owner.json.GET('/webhook-endpoints/{id}', { params: { path: { id: own } } });
    expect(kept.data?.data.enabled_events).toEqual(['space.created']);
  });

  it('redelivers only with events:read and the record read scope', async () => {
    await owner.client.POST('/spaces', { body: { name: 'Evented', color: 1 } });
    const events = await owner.json.GET('/events', { params: { query: { type: 'space.created', per_page: 10 } } });
    expect(events.error).toBeUndefined();
    const eventId = events.data?.data[0]?.id ?? '';
    expect(eventId).toMatch(/^evt_/);
    const noEvents = await post(await keyWith('webhooks:write', 'spaces:read'), `/events/${eventId}/redeliver`, {});
    expect((await expectProblem(noEvents, 403)).detail).toContain('events:read');
    const noRecord = await post(await keyWith('webhooks:write', 'events:read'), `/events/${eventId}/redeliver`, {});
    expect((await expectProblem(noRecord, 403)).detail).toContain('spaces:read');
    const ok = await post(
      await keyWith('webhooks:write', 'events:read', 'spaces:read'),
      `/events/${eventId}/redeliver`,
      {},
    );
    expect(ok.status).toBe(202);
  });
});
