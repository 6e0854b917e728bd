// Error typing: every non-2xx answer becomes an ApiError carrying status, problem, field errors and request id,
// against the real server (401, 404, 409, 422) and a scripted one (a proxy's HTML 502).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiError, createClient, type DomainSpaceClient, DomainSpaceError } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';
import { recordingFetch } from './recording-fetch.js';
import { startScriptedServer } from './scripted-server.js';

let server: TestServer;
let api: DomainSpaceClient;

beforeAll(async () => {
  server = await startServer();
  const { key } = await server.account();
  api = createClient({ baseUrl: server.apiUrl, apiKey: key, fetch: recordingFetch().fetch });
});
afterAll(() => server.close());

async function apiError(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => {
      throw new Error('the call succeeded');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(error).toBeInstanceOf(DomainSpaceError);
  return error as ApiError;
}

describe('ApiError from the service', () => {
  test('401: a bad key, with the WWW-Authenticate header', async () => {
    const stranger = createClient({ baseUrl: server.apiUrl, apiKey: 'dss_000000000000_not-a-real-key' });
    const error = await apiError(stranger.domains.list());
    expect(error).toMatchObject({ status: 401, title: 'Unauthorized', errors: [] });
    expect(error.headers.get('WWW-Authenticate')).toMatch(/^Bearer/);
    expect(error.message).toMatch(/^401 Unauthorized: /);
  });

  test('422: the message reads as client/README.md shows it', async () => {
    const error = await apiError(api.spaces.create({ name: 'Shown', color: 9 as never }));
    const readme = readFileSync(new URL('../../client/README.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    const shown = error.message.replace(/\[request id [\w-]+\]$/, '[request id ');
    expect(readme).toContain(shown);
  });

  test('404: an unknown id', async () => {
    const error = await apiError(api.spaces.get(987_654));
    expect(error).toMatchObject({ status: 404, title: 'Not Found' });
    expect(error.problem?.status).toBe(404);
    expect(error.message).toContain(error.detail);
  });

  test('409: a domain name that exists already', async () => {
    await api.domains.create({ name: 'taken.example.com' });
    const error = await apiError(api.domains.create({ name: 'taken.example.com' }));
    expect(error).toMatchObject({ status: 409, title: 'Conflict' });
    expect(error.detail).toContain('taken.example.com');
  });

  test('422: each bad field by name, in errors and in the message', async () => {
    const error = await apiError(api.spaces.create({ name: '', color: 9 }));
    expect(error.status).toBe(422);
    expect(error.errors.map((e) => e.field).sort()).toEqual(['color', 'name']);
    expect(error.errors.every((e) => e.location === 'body' && e.message.length > 0)).toBe(true);
    expect(error.message).toMatch(/color: /);
    expect(error.message).toMatch(/name: /);
  });

  test("422: a domain's name cannot change (refused by the types, and by the API at run time)", async () => {
    const domain = await api.domains.create({ name: 'fixed.example.com' });
    // @ts-expect-error domain update bodies have no name
    const error = await apiError(api.domains.update(domain.id, { name: 'other.example.com' }));
    expect(error.status).toBe(422);
    expect(error.errors.map((e) => e.field)).toEqual(['name']);
  });

  test('422: an unknown query parameter, located in the query', async () => {
    // @ts-expect-error not a list parameter
    const error = await apiError(api.domains.list({ colour: 'blue' }));
    expect(error.errors).toEqual([expect.objectContaining({ location: 'query', field: 'colour' })]);
  });

  test('the request id is the X-Request-Id header of the answer, and is in the message', async () => {
    const error = await apiError(api.domains.get(123_456));
    expect(error.requestId).toMatch(/^[\w-]{8,}$/);
    expect(error.requestId).toBe(error.headers.get('X-Request-Id'));
    expect(error.requestId).toBe(error.problem?.request_id);
    expect(error.message).toContain(`[request id ${error.requestId}]`);
  });
});

describe('answers that are not what the contract promises', () => {
  test('a 200 whose body is not JSON is a DomainSpaceError saying so, not a NetworkError', async () => {
    const odd = await startScriptedServer([{ status: 200, body: '<html>maintenance</html>' }]);
    try {
      const error = await createClient({ baseUrl: odd.url, apiKey: 'key' })
        .domains.get(1)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DomainSpaceError);
      expect(error).not.toBeInstanceOf(ApiError);
      expect((error as Error).message).toMatch(/^The answer was not valid JSON/);
    } finally {
      await odd.close();
    }
  });

  test("a proxy's HTML 502 is an ApiError with what is known", async () => {
    const proxy = await startScriptedServer([
      { status: 502, headers: { 'X-Request-Id': 'proxy-1' }, body: '<html><body>Bad Gateway</body></html>' },
    ]);
    try {
      const client = createClient({ baseUrl: proxy.url, apiKey: 'key' });
      const error = await apiError(client.domains.list());
      expect(error).toMatchObject({
        status: 502,
        title: 'Bad Gateway',
        type: 'about:blank',
        detail: undefined,
        problem: undefined,
        errors: [],
        requestId: 'proxy-1',
        body: '<html><body>Bad Gateway</body></html>',
      });
      expect(error.message).toBe('502 Bad Gateway [request id proxy-1]');
    } finally {
      await proxy.close();
    }
  });
});
