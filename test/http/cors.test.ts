// CORS: browser pages on other origins may call the API with a key, and read its answers and error bodies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

const APP = 'https://app.example';

/** A preflight as a browser sends it; not part of the contract, so it bypasses the test client's spec check. */
function preflight(server: TestServer, path: string, method: string, origin = APP): Promise<Response> {
  return fetch(`${server.apiUrl}${path}`, {
    method: 'OPTIONS',
    headers: {
      Origin: origin,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': 'authorization,content-type',
    },
  });
}

describe('any origin (the default)', () => {
  let server: TestServer;
  let account: TestAccount;
  beforeAll(async () => {
    server = await startServer();
    account = await server.account();
  });
  afterAll(() => server.close());

  it.each([
    ['/domains', 'POST', 'GET, HEAD, POST'],
    ['/spaces/1', 'PATCH', 'GET, HEAD, PUT, DELETE, PATCH'],
  ])(
    'answers a preflight for %s %s with 204 and the methods the spec lists, without a key',
    async (path, method, allow) => {
      const response = await preflight(server, path, method);
      expect(response.status).toBe(204);
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(response.headers.get('access-control-allow-methods')).toBe(allow);
      expect(response.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
      expect(response.headers.get('access-control-allow-headers')).toMatch(/Content-Type/);
      expect(Number(response.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    },
  );

  it('answers a preflight for an unknown path with 404', async () => {
    const response = await preflight(server, '/nothing', 'GET');
    expect(response.status).toBe(404);
  });

  it('lets the page read an answer, its Location and its request id', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: {
        Origin: APP,
        Authorization: `Bearer ${account.key}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'name=Browser',
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    const exposed = response.headers.get('access-control-expose-headers') ?? '';
    for (const header of ['Location', 'X-Request-Id', 'Retry-After', 'WWW-Authenticate']) {
      expect(exposed).toContain(header);
    }
  });

  it('lets the page read a 401, so it can tell the user the key is wrong', async () => {
    const response = await server.fetch('/api/v1/domains', { headers: { Origin: APP } });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('keeps answering an OPTIONS without Origin with 405 and Allow, as the spec says', async () => {
    const response = await server.fetch('/api/v1/domains', { method: 'OPTIONS' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('a list of origins', () => {
  let server: TestServer;
  let account: TestAccount;
  beforeAll(async () => {
    server = await startServer({ corsOrigins: [APP, 'http://localhost:5173'] });
    account = await server.account();
  });
  afterAll(() => server.close());

  it('echoes an allowed origin and varies on Origin', async () => {
    const response = await server.fetch('/api/v1/domains', {
      headers: { Origin: 'http://localhost:5173', Authorization: `Bearer ${account.key}` },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    expect(response.headers.get('vary')).toMatch(/Origin/);
  });

  it('gives another origin no CORS headers and no preflight', async () => {
    const answer = await server.fetch('/api/v1/domains', {
      headers: { Origin: 'https://evil.example', Authorization: `Bearer ${account.key}` },
    });
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    expect(answer.headers.get('vary')).toMatch(/Origin/);
    const response = await preflight(server, '/domains', 'GET', 'https://evil.example');
    expect(response.status).toBe(405);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('no origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ corsOrigins: [] });
  });
  afterAll(() => server.close());

  it('sends no CORS headers at all', async () => {
    const response = await preflight(server, '/domains', 'GET');
    expect(response.status).toBe(405);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});
