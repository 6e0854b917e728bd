// The client against the real service with a tiny quota (3 requests per 4 seconds per key): it exposes the limit
// each answer states, waits out a 429's Retry-After and then succeeds, and gives a POST's 429 to the caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, createClient, type DomainSpaceClient } from '../../client/src/index.js';
import { readRateLimit } from '../../client/src/rate-limit.js';
import { startServer, type TestServer } from '../support/server.js';
import { recordingFetch } from './recording-fetch.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer({ rateLimit: { perKey: { limit: 3, windowSeconds: 4 } } });
});
afterAll(() => server.close());

/** A client of a new account, and the status of every answer it received, retried attempts included. */
async function newClient(
  options: { maxRetries?: number } = {},
): Promise<{ api: DomainSpaceClient; statuses: number[] }> {
  const { key } = await server.account();
  const recording = recordingFetch();
  const statuses: number[] = [];
  const api = createClient({
    baseUrl: server.apiUrl,
    apiKey: key,
    ...options,
    fetch: async (input, init) => {
      const response = await recording.fetch(input, init);
      statuses.push(response.status);
      return response;
    },
  });
  return { api, statuses };
}

describe('the rate-limit state', () => {
  it('is undefined before the first answer, then what the latest answer stated', async () => {
    const { api } = await newClient();
    expect(api.rateLimit).toBeUndefined();
    await api.spaces.list();
    expect(api.rateLimit).toMatchObject({ policy: 'api-key', limit: 3, windowSeconds: 4, remaining: 2 });
    expect(api.rateLimit?.resetSeconds).toBeLessThanOrEqual(4);
    expect(api.rateLimit?.resetAt).toBeInstanceOf(Date);
    await api.raw.GET('/domains');
    expect(api.rateLimit?.remaining).toBe(1);
  });
});

describe('a 429 from the real service', () => {
  it('is waited out (Retry-After) and retried: the call succeeds in the next window', async () => {
    const { api, statuses } = await newClient();
    const space = await api.spaces.create({ name: 'Quota' });
    await api.spaces.get(space.id);
    await api.spaces.list();
    expect(api.rateLimit?.remaining).toBe(0);

    const started = Date.now();
    await expect(api.spaces.get(space.id)).resolves.toMatchObject({ id: space.id, name: 'Quota' });
    expect(statuses).toEqual([201, 200, 200, 429, 200]);
    // The new window's first request; the bound is generous, the wait itself is at most 4 seconds.
    expect(api.rateLimit).toMatchObject({ policy: 'api-key', limit: 3, remaining: 2 });
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('is waited out for a create too, which carries its Idempotency-Key by default (client/README.md says so)', async () => {
    const { api, statuses } = await newClient();
    for (let request = 0; request < 3; request++) await api.domains.list();
    await expect(api.spaces.create({ name: 'After the wait' })).resolves.toMatchObject({ name: 'After the wait' });
    expect(statuses).toEqual([200, 200, 200, 429, 201]);
  });

  it('reads as the README shows once not retried: status, title, the detail, the request id', async () => {
    const { api } = await newClient({ maxRetries: 0 });
    for (let request = 0; request < 3; request++) await api.domains.list();
    const error = (await api.domains.list().catch((caught: unknown) => caught)) as ApiError;
    expect(error.message).toMatch(
      /^429 Too Many Requests: This API key may send 3 requests per 4 seconds; retry in \d+ seconds\. \[request id [\w-]+\]$/,
    );
  });

  it('reaches the caller as an ApiError with retryAfter when it is not retried (a POST without an Idempotency-Key)', async () => {
    const { api, statuses } = await newClient();
    for (let request = 0; request < 3; request++) await api.domains.list();
    const error = await api.spaces
      .create({ name: 'Too soon' }, { idempotencyKey: false })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, title: 'Too Many Requests' });
    expect((error as ApiError).retryAfter).toBeGreaterThanOrEqual(1);
    expect((error as ApiError).requestId).toBeTruthy();
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect(api.rateLimit).toMatchObject({ remaining: 0 });
  });
});

describe('readRateLimit', () => {
  it.each([
    ['no fields', {}, undefined],
    [
      'one policy',
      { RateLimit: '"api-key"; r=5; t=30', 'RateLimit-Policy': '"api-key"; q=600; w=60; pk=:YWJj:' },
      { policy: 'api-key', limit: 600, remaining: 5, resetSeconds: 30, windowSeconds: 60 },
    ],
    [
      'two policies: the tightest',
      {
        RateLimit: '"day"; r=900; t=3600, "minute"; r=2; t=7',
        'RateLimit-Policy': '"day";q=1000;w=86400, "minute";q=60;w=60',
      },
      { policy: 'minute', limit: 60, remaining: 2, resetSeconds: 7, windowSeconds: 60 },
    ],
    [
      'no policy field',
      { RateLimit: '"api-key";r=0;t=12' },
      { policy: 'api-key', limit: undefined, remaining: 0, resetSeconds: 12 },
    ],
    ['garbage', { RateLimit: 'nonsense', 'RateLimit-Policy': 'q=x' }, undefined],
  ])('reads %s', (_name, headers, expected) => {
    const state = readRateLimit(new Headers(headers), 0);
    if (expected === undefined) expect(state).toBeUndefined();
    else expect(state).toMatchObject({ ...expected, resetAt: new Date(expected.resetSeconds * 1000) });
  });
});
