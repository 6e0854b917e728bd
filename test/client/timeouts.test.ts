// Timeouts and aborts: a TimeoutError when the call outlives timeoutMs, the standard AbortError when the
// caller's own signal aborts it, each distinguishable from the other and from network errors.
import { describe, expect, test } from 'vitest';
import {
  type DomainSpaceClient,
  DomainSpaceError,
  isAbortError,
  NetworkError,
  TimeoutError,
} from '../../client/src/index.js';
import { domainBody, scriptedClients } from './scripted-server.js';

const clientFor = scriptedClients();

describe('timeout', () => {
  test('a server that never answers ends in a TimeoutError', async () => {
    const { api } = await clientFor(['hang'], { timeoutMs: 200 });
    const error = await api.domains.get(1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toBeInstanceOf(DomainSpaceError);
    expect(error).not.toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ timeoutMs: 200, message: 'The request took longer than 200 ms' });
  });

  test('a custom fetch that ignores the signal still times out', async () => {
    const { api } = await clientFor(['hang'], { timeoutMs: 150, fetch: (request) => fetch(request.url) });
    await expect(api.domains.get(1)).rejects.toBeInstanceOf(TimeoutError);
  });

  test('a call option overrides the client timeout', async () => {
    const { api } = await clientFor(['hang'], { timeoutMs: 60_000 });
    await expect(api.spaces.list({}, { timeoutMs: 150 })).rejects.toMatchObject({
      name: 'TimeoutError',
      timeoutMs: 150,
    });
  });

  test('the timeout covers the retries: a call that keeps failing ends when it runs out', async () => {
    const { api, server } = await clientFor([{ status: 503, headers: { 'Retry-After': '0' } }, 'hang'], {
      timeoutMs: 300,
      maxRetries: 5,
    });
    await expect(api.domains.get(1)).rejects.toBeInstanceOf(TimeoutError);
    expect(server.requests).toHaveLength(2);
  });

  test('the raw client times out as well', async () => {
    const { api } = await clientFor(['hang'], { timeoutMs: 150 });
    await expect(api.raw.GET('/spaces')).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('abort', () => {
  test("the caller's signal aborts a call with the standard AbortError, not a TimeoutError", async () => {
    const { api, server } = await clientFor(['hang']);
    const controller = new AbortController();
    const call = api.domains.get(1, { signal: controller.signal }).catch((e: unknown) => e);
    await server.received(1);
    controller.abort();
    const error = await call;
    expect(isAbortError(error)).toBe(true);
    expect(error).toBeInstanceOf(DOMException);
    expect(error).not.toBeInstanceOf(DomainSpaceError);
  });

  test("an abort with a reason rejects with that reason, as fetch's own abort does", async () => {
    const { api, server } = await clientFor(['hang']);
    const controller = new AbortController();
    const call = api.domains.list({}, { signal: controller.signal }).catch((e: unknown) => e);
    await server.received(1);
    const reason = new Error('user left the page');
    controller.abort(reason);
    await expect(call).resolves.toBe(reason);
  });

  test('an already aborted signal sends nothing', async () => {
    const { api, server } = await clientFor([{ status: 200, body: domainBody }]);
    const error = await api.domains.get(1, { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(0);
  });

  test.each([
    ['a helper', (api: DomainSpaceClient, signal: AbortSignal) => api.domains.get(1, { signal })],
    // The raw client has no guard around the whole call: only an abortable wait ends this one.
    [
      'the raw client',
      (api: DomainSpaceClient, signal: AbortSignal) =>
        api.raw.GET('/domains/{id}', { params: { path: { id: 1 } }, signal }),
    ],
  ])('the wait before a retry ends as soon as the signal aborts (%s)', async (_, send) => {
    // Without an abortable wait this call would sleep 25 s, past the test's timeout.
    const controller = new AbortController();
    const { api, server } = await clientFor([{ status: 429, headers: { 'Retry-After': '25' } }, 'hang'], {
      maxRetryDelayMs: 60_000,
      timeoutMs: 0,
      fetch: async (request, init) => {
        const response = await fetch(request, init);
        // After the 429 has been handed back, so the abort meets the wait and not the fetch (an abort inside
        // this fetch would end the call while the answer is awaited, whether or not the wait is abortable).
        setTimeout(() => controller.abort(), 50);
        return response;
      },
    });
    const error = await send(api, controller.signal).catch((e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(server.requests).toHaveLength(1);
  });

  test("the client's signal aborts every call of the client", async () => {
    const controller = new AbortController();
    const { api, server } = await clientFor(['hang'], { signal: controller.signal });
    const calls = [api.domains.get(1), api.spaces.list()].map((call) => call.catch((e: unknown) => e));
    await server.received(2);
    controller.abort();
    for (const error of await Promise.all(calls)) expect(isAbortError(error)).toBe(true);
  });
});
