// createClient's options: clear TypeErrors for bad ones, and the headers every request carries.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type ClientOptions, createClient, VERSION } from '../../client/src/index.js';
import { domainBody, type ScriptedServer, startScriptedServer } from './scripted-server.js';

describe('invalid options', () => {
  const valid = { baseUrl: 'http://127.0.0.1:1/api/v1', apiKey: 'key' };
  test.each([
    ['no options', undefined, /options object/],
    ['no baseUrl', { apiKey: 'key' }, /baseUrl is required/],
    ['an empty baseUrl', { ...valid, baseUrl: ' ' }, /baseUrl is required/],
    ['no apiKey', { baseUrl: valid.baseUrl }, /apiKey is required/],
    ['a negative maxRetries', { ...valid, maxRetries: -1 }, /maxRetries must be a whole number/],
    ['a fractional timeoutMs', { ...valid, timeoutMs: 1.5 }, /timeoutMs must be a whole number/],
    ['an endless timeoutMs', { ...valid, timeoutMs: Number.POSITIVE_INFINITY }, /timeoutMs must be/],
    ['a string maxRetryDelayMs', { ...valid, maxRetryDelayMs: '5' }, /maxRetryDelayMs must be/],
    ['an unknown bodyEncoding', { ...valid, bodyEncoding: 'xml' }, /bodyEncoding must be "form" or "json"/],
    ['a fetch that is no function', { ...valid, fetch: 'fetch' }, /fetch must be a function/],
  ])('%s is a TypeError that says what is wrong', (_, options, message) => {
    expect(() => createClient(options as unknown as ClientOptions)).toThrow(TypeError);
    expect(() => createClient(options as unknown as ClientOptions)).toThrow(message);
  });

  test('a bad timeoutMs of one call rejects that call with a TypeError', async () => {
    const api = createClient(valid);
    await expect(api.domains.get(1, { timeoutMs: -5 })).rejects.toThrow(TypeError);
  });
});

describe('request headers', () => {
  let server: ScriptedServer;
  beforeAll(async () => {
    server = await startScriptedServer([{ status: 200, body: domainBody }]);
  });
  afterAll(() => server.close());

  const lastHeaders = () => server.requests.at(-1)?.headers ?? {};

  test('the key as a bearer token, JSON accepted, and a User-Agent naming the client version', async () => {
    await createClient({ baseUrl: server.url, apiKey: 'dss_abc_secret' }).domains.get(1);
    expect(lastHeaders()).toMatchObject({
      authorization: 'Bearer dss_abc_secret',
      accept: 'application/json, application/problem+json',
      'user-agent': `domain-space-client/${VERSION}`,
    });
  });

  test('userAgent and headers options are sent with every request', async () => {
    const api = createClient({
      baseUrl: server.url,
      apiKey: 'key',
      userAgent: 'billing-job/2.0',
      headers: { 'X-Request-Id': 'job-42-run-7' },
    });
    await api.spaces.get(1);
    expect(lastHeaders()).toMatchObject({ 'user-agent': 'billing-job/2.0', 'x-request-id': 'job-42-run-7' });
  });

  test('in a browser no User-Agent is set by default: the browser has its own, and CORS would need to allow it', async () => {
    const scope = globalThis as { document?: unknown };
    scope.document = {};
    try {
      await createClient({ baseUrl: server.url, apiKey: 'key' }).domains.get(1);
    } finally {
      delete scope.document;
    }
    expect(lastHeaders()['user-agent']).not.toMatch(/domain-space-client/);
  });

  test('a baseUrl with a trailing slash is joined without a double slash', async () => {
    await createClient({ baseUrl: `${server.url}/api/v1/`, apiKey: 'key' }).domains.get(7);
    expect(server.requests.at(-1)?.url).toBe('/api/v1/domains/7');
  });
});

test("VERSION is the package's version", () => {
  const manifest = JSON.parse(readFileSync(new URL('../../client/package.json', import.meta.url), 'utf8'));
  expect(VERSION).toBe(manifest.version);
});
