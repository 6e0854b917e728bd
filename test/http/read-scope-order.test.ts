// The read scopes of the event types a request names (a subscription's enabled_events, the event log's ?type=)
// are scopes like the declared ones: a key that may not read them learns that (403) before any field or parameter
// is judged (422), whatever else is wrong with the request; what a request asks of a stored record (the types an
// endpoint takes when it is re-pointed) is judged once the record is read. Both engines: the order is the same on
// each, and the re-pointing check reads the endpoint.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let owner: TestAccount;
/** May manage endpoints and read the log, but no record's events: domain.*, space.* are beyond it. */
let narrow: string;

beforeAll(async () => {
  server = await startServer();
  owner = await server.account('read-scope-order');
  narrow = (await issueKey(server.db, owner.name, { scopes: ['webhooks:write', 'events:read'] })).key;
});
afterAll(() => server?.close());

const request = (method: string, path: string, body?: object) =>
  server.fetch(`/api/v1${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${narrow}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

/** A 403 for read scopes, naming `scopes` (as X-Accepted-Scopes lists them), and no field; its detail. */
async function refusedForRead(response: Response, scopes: string): Promise<string> {
  const problem = await expectProblem(response, 403);
  expect(problem.type).toBe('/problems/insufficient-scope');
  for (const scope of scopes.split(', ')) expect(problem.detail).toContain(scope);
  expect(problem).not.toHaveProperty('errors');
  expect(response.headers.get('x-accepted-scopes')).toBe(scopes);
  return problem.detail as string;
}

/** Every field of it wrong but the types: an unknown field, a bad url, a description of the wrong type. */
const BAD = { url: 'not a url', unknown: 1, description: 7 };

describe('the read scopes of the types a request names, before its fields', () => {
  it('refuses creating an endpoint for a type the key may not read: 403, not 422', async () => {
    const response = await request('POST', '/webhook-endpoints', { ...BAD, enabled_events: ['domain.created'] });
    expect(await refusedForRead(response, 'domains:read')).toContain('creating an endpoint receiving domain.created');
  });

  it.each(['PUT', 'PATCH'])(
    'refuses %s of an endpoint to a type the key may not read: 403, not 422',
    async (method) => {
      const made = await owner.json.POST('/webhook-endpoints', {
        body: { url: 'https://example.com/hook', enabled_events: ['webhook_endpoint.disabled'] },
      });
      const id = made.data?.data.id ?? 0;
      const response = await request(method, `/webhook-endpoints/${id}`, { ...BAD, enabled_events: ['*'] });
      await refusedForRead(response, 'domains:read, spaces:read');
      const kept = await owner.json.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
      expect(kept.data?.data.enabled_events).toEqual(['webhook_endpoint.disabled']);
    },
  );

  it('refuses listing events of a type the key may not read before judging the other parameters', async () => {
    const response = await request('GET', '/events?type=space.created&per_page=abc&bogus=1');
    expect(await refusedForRead(response, 'spaces:read')).toContain('listing space.created events');
  });

  it('leaves a type the log does not know to the 422, and judges the fields once the key may read the types', async () => {
    const unknown = await request('POST', '/webhook-endpoints', {
      url: 'https://example.com/h',
      enabled_events: ['no.such'],
    });
    expect((await expectProblem(unknown, 422)).type).toBe('/problems/validation');
    const readable = await request('POST', '/webhook-endpoints', {
      ...BAD,
      enabled_events: ['webhook_endpoint.disabled'],
    });
    const problem = await expectProblem(readable, 422);
    expect(problem.type).toBe('/problems/validation');
    expect((problem.errors as Array<{ field: string }>).map((error) => error.field)).toContain('url');
    expect((await expectProblem(await request('GET', '/events?type=no.such'), 422)).type).toBe('/problems/validation');
  });

  it('judges re-pointing by the types the endpoint takes once it has read it', async () => {
    const made = await owner.json.POST('/webhook-endpoints', {
      body: { url: 'https://example.com/before', enabled_events: ['space.created'] },
    });
    const id = made.data?.data.id ?? 0;
    const response = await request('PATCH', `/webhook-endpoints/${id}`, { url: 'https://example.com/after' });
    expect(await refusedForRead(response, 'spaces:read')).toContain('re-pointing an endpoint receiving space.created');
    const missing = await request('PATCH', '/webhook-endpoints/999999999', { url: 'https://example.com/after' });
    await expectProblem(missing, 404);
  });
});
