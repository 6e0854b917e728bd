// Retries of 429, 503 and network errors (of a POST only with an Idempotency-Key), honouring Retry-After, against a scripted local
// server that answers what the real service does not answer on demand.
import { createServer } from 'node:net';
import { describe, expect, test } from 'vitest';
import { ApiError, createClient, NetworkError } from '../../client/src/index.js';
import { domainBody, problem, type ScriptedServer, scriptedClients } from './scripted-server.js';

const clientFor = scriptedClients();

const ok = { status: 200, body: domainBody };
const unavailable = { status: 503, headers: { 'Retry-After': '0' }, body: problem(503, 'Service Unavailable') };

/** Milliseconds between the first and second request the server saw. */
const gap = (s: ScriptedServer) => (s.requests[1]?.at ?? 0) - (s.requests[0]?.at ?? 0);

describe('Retry-After', () => {
  test('a 429 with Retry-After: 1 is retried after waiting about a second', async () => {
    const { api, server } = await clientFor([
      { status: 429, headers: { 'Retry-After': '1' }, body: problem(429, 'Too Many Requests') },
      ok,
    ]);
    await expect(api.domains.get(1)).resolves.toEqual(domainBody.data);
    expect(server.requests).toHaveLength(2);
    expect(gap(server)).toBeGreaterThanOrEqual(900);
  });

  test('an HTTP-date Retry-After is honoured', async () => {
    // HTTP dates have whole seconds: two seconds ahead is a wait of more than one second.
    const date = new Date(Date.now() + 2_000).toUTCString();
    const { api, server } = await clientFor([{ status: 503, headers: { 'Retry-After': date } }, ok]);
    await expect(api.domains.get(1)).resolves.toEqual(domainBody.data);
    expect(server.requests).toHaveLength(2);
    expect(gap(server)).toBeGreaterThanOrEqual(900);
  });

  test('a Retry-After longer than maxRetryDelayMs is not waited for: the ApiError carries it', async () => {
    const { api, server } = await clientFor(
      [{ status: 429, headers: { 'Retry-After': '120' }, body: problem(429, 'Too Many Requests') }, ok],
      { maxRetryDelayMs: 5_000 },
    );
    const error = await api.domains.get(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, retryAfter: 120 });
    expect(server.requests).toHaveLength(1);
  });

  test('a Retry-After beyond the call timeout is not waited for either', async () => {
    const { api, server } = await clientFor([{ status: 503, headers: { 'Retry-After': '5' } }, ok], {
      timeoutMs: 2_000,
    });
    await expect(api.domains.get(1)).rejects.toMatchObject({ name: 'ApiError', status: 503, retryAfter: 5 });
    expect(server.requests).toHaveLength(1);
  });
});

describe('retried answers', () => {
  test('a 503 without Retry-After is retried with backoff', async () => {
    const { api, server } = await clientFor([{ status: 503 }, ok]);
    await expect(api.domains.get(1)).resolves.toEqual(domainBody.data);
    expect(server.requests).toHaveLength(2);
  });

  test.each([
    ['GET (list)', (api: Api) => api.domains.list(), 'GET', { status: 200, body: emptyPage() }],
    ['PATCH', (api: Api) => api.domains.update(1, { index_page: null }), 'PATCH', ok],
    ['PUT', (api: Api) => api.domains.replace(1, { index_page: null }), 'PUT', ok],
    ['DELETE', (api: Api) => api.domains.delete(1), 'DELETE', { status: 204 }],
  ])('%s is retried: it is idempotent by the contract', async (_, call, method, success) => {
    const { api, server } = await clientFor([unavailable, success]);
    await call(api);
    expect(server.requests.map((r) => r.method)).toEqual([method, method]);
  });

  test('after maxRetries retries the last answer is thrown', async () => {
    const { api, server } = await clientFor([unavailable], { maxRetries: 3 });
    const error = await api.spaces.get(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, requestId: 'scripted-503' });
    expect(server.requests).toHaveLength(4);
  });

  test('maxRetries 0 sends one request', async () => {
    const { api, server } = await clientFor([unavailable, ok], { maxRetries: 0 });
    await expect(api.domains.get(1)).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  test.each([429, 503])('a create answered %i is retried with the same Idempotency-Key', async (status) => {
    const { api, server } = await clientFor([{ status, headers: { 'Retry-After': '0' } }, ok]);
    await expect(api.domains.create({ name: 'shop.example' })).resolves.toEqual(domainBody.data);
    expect(server.requests).toHaveLength(2);
    const [first, second] = server.requests.map((r) => r.headers['idempotency-key']);
    expect(first).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second).toBe(first);
  });

  test('each create gets a key of its own', async () => {
    const { api, server } = await clientFor([{ status: 201, body: domainBody }]);
    await api.domains.create({ name: 'a.example' });
    await api.domains.create({ name: 'b.example' });
    const [first, second] = server.requests.map((r) => r.headers['idempotency-key']);
    expect(first).not.toBe(second);
  });

  test('a create sends the key the caller passes', async () => {
    const { api, server } = await clientFor([{ status: 201, body: domainBody }]);
    await api.domains.create({ name: 'a.example' }, { idempotencyKey: 'job-42/shop' });
    expect(server.requests[0]?.headers['idempotency-key']).toBe('job-42/shop');
  });

  test.each([
    { how: 'idempotencyKeys: false on the client', options: { idempotencyKeys: false }, call: {} },
    { how: 'idempotencyKey: false on the call', options: {}, call: { idempotencyKey: false as const } },
  ])('a create without a key ($how) is not retried', async ({ options, call }) => {
    const { api, server } = await clientFor([{ status: 503, headers: { 'Retry-After': '0' } }, ok], options);
    await expect(api.domains.create({ name: 'shop.example' }, call)).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['idempotency-key']).toBeUndefined();
  });

  test('a create answered 409 "still running" is retried until the saved answer comes', async () => {
    const inProgress = {
      ...problem(409, 'Conflict'),
      type: '/problems/idempotency-key-in-use',
    };
    const { api, server } = await clientFor([{ status: 409, body: inProgress }, ok]);
    await expect(api.domains.create({ name: 'shop.example' })).resolves.toEqual(domainBody.data);
    expect(server.requests).toHaveLength(2);
  });

  test('a create answered 409 for a taken name is not retried', async () => {
    const { api, server } = await clientFor([{ status: 409, body: problem(409, 'Conflict') }, ok]);
    await expect(api.domains.create({ name: 'shop.example' })).rejects.toMatchObject({ status: 409 });
    expect(server.requests).toHaveLength(1);
  });

  test.each([400, 404, 500, 502])('a %i is not retried', async (status) => {
    const { api, server } = await clientFor([{ status, body: problem(status, 'Failed') }, ok]);
    await expect(api.domains.get(1)).rejects.toMatchObject({ status });
    expect(server.requests).toHaveLength(1);
  });

  test('the raw client retries too', async () => {
    const { api, server } = await clientFor([unavailable, ok]);
    const { data } = await api.raw.GET('/domains/{id}', { params: { path: { id: 1 } } });
    expect(data).toEqual(domainBody);
    expect(server.requests).toHaveLength(2);
  });

  test('each attempt sends the whole body again', async () => {
    const bodies: string[] = [];
    const { api } = await clientFor([unavailable, ok], {
      fetch: async (request, init) => {
        bodies.push(await request.clone().text());
        return fetch(request, init);
      },
    });
    await api.domains.update(1, { index_page: 'https://a.example/' });
    expect(bodies).toEqual(['index_page=https%3A%2F%2Fa.example%2F', 'index_page=https%3A%2F%2Fa.example%2F']);
  });
});

describe('network errors', () => {
  test('a refused connection is retried, then thrown as a NetworkError', async () => {
    const url = await closedPortUrl();
    let attempts = 0;
    const api = createClient({
      baseUrl: url,
      apiKey: 'key',
      maxRetries: 2,
      fetch: (request, init) => {
        attempts++;
        return fetch(request, init);
      },
    });
    const error = await api.domains.get(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).message).toMatch(/ECONNREFUSED/);
    expect((error as NetworkError).cause).toBeInstanceOf(Error);
    expect(attempts).toBe(3);
  });

  test.each([
    { keys: true, attempts: 3 },
    { keys: false, attempts: 1 },
  ])(
    'a create meeting a refused connection is tried $attempts time(s) with idempotencyKeys: $keys',
    async ({ keys, attempts: expected }) => {
      const url = await closedPortUrl();
      let attempts = 0;
      const api = createClient({
        baseUrl: url,
        apiKey: 'key',
        idempotencyKeys: keys,
        maxRetryDelayMs: 50,
        fetch: (request, init) => {
          attempts++;
          return fetch(request, init);
        },
      });
      await expect(api.spaces.create({ name: 'Once' })).rejects.toBeInstanceOf(NetworkError);
      expect(attempts).toBe(expected);
    },
  );
});

type Api = ReturnType<typeof createClient>;

function emptyPage() {
  return {
    data: [],
    links: { first: '/api/v1/domains?page=1', last: '/api/v1/domains?page=1', prev: null, next: null },
    meta: { current_page: 1, last_page: 1, per_page: 10, total: 0, from: null, to: null },
  };
}

/** A URL on a port that was just free: nothing listens there, so connecting is refused. */
async function closedPortUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
