// Rate limits in one process (counters in memory): the IETF RateLimit fields on every /api/v1 answer, 429 with
// Retry-After once a key's quota is spent, the failed-authentication guard per address, and the configuration.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../server/config.js';
import { parseQuota, parseTrustProxy } from '../../server/http/access/rate-limit.js';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { policyItem } from '../support/rate-limit.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

const WRONG_KEY = `Bearer dss_000000000000_${'A'.repeat(43)}`;

describe('the quota per API key', () => {
  let server: TestServer;
  let alice: TestAccount;
  let bob: TestAccount;
  const QUOTA = 8;

  beforeAll(async () => {
    server = await startServer({ rateLimit: { perKey: { limit: QUOTA, windowSeconds: 60 } } });
    alice = await server.account('alice');
    bob = await server.account('bob');
  });
  afterAll(() => server.close());

  const as = (account: TestAccount, path: string, init: RequestInit = {}) =>
    server.fetch(`/api/v1${path}`, {
      ...init,
      headers: { Authorization: `Bearer ${account.key}`, ...(init.headers as Record<string, string>) },
    });

  it('counts every answer, success or error, and says so in RateLimit and RateLimit-Policy', async () => {
    const answers = [
      await as(alice, '/domains'),
      await as(alice, '/spaces/999999'),
      await as(alice, '/spaces', { method: 'POST', body: new URLSearchParams({ color: '9' }) }),
      await as(alice, '/spaces', { method: 'POST', body: new URLSearchParams({ name: 'Sales' }) }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 404, 422, 201]);
    answers.forEach((answer, index) => {
      expect(policyItem(answer.headers.get('ratelimit-policy'))).toMatchObject({ name: 'api-key', q: QUOTA, w: 60 });
      const state = policyItem(answer.headers.get('ratelimit'));
      expect(state).toMatchObject({ name: 'api-key', r: QUOTA - 1 - index });
      expect(state.t).toBeGreaterThan(0);
      expect(state.t).toBeLessThanOrEqual(60);
    });
  });

  it('answers 429 problem+json with Retry-After once the quota is spent, and other keys go on', async () => {
    let last = await as(alice, '/domains');
    while (last.status !== 429) {
      expect(last.status).toBe(200);
      last = await as(alice, '/domains');
    }
    expect(policyItem(last.headers.get('ratelimit'))).toMatchObject({ name: 'api-key', r: 0 });
    const retryAfter = Number(last.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(last.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = await last.json();
    expect(problem).toMatchObject({
      type: `${PROBLEM_TYPE_BASE}rate-limited`,
      title: 'Too Many Requests',
      status: 429,
    });
    expect(problem.detail).toContain(`${QUOTA} requests per 60 seconds`);
    expect(problem.detail).toContain(`retry in ${retryAfter} seconds`);

    // Every operation is refused, before anything else about the request is looked at.
    expect((await as(alice, '/spaces/1', { method: 'DELETE' })).status).toBe(429);
    expect((await as(alice, '/spaces', { method: 'POST', body: '{' })).status).toBe(429);

    const other = await as(bob, '/domains');
    expect(other.status).toBe(200);
    expect(policyItem(other.headers.get('ratelimit'))).toMatchObject({ r: QUOTA - 1 });
  });

  it("names the key's partition in RateLimit-Policy, the same for every answer to that key", async () => {
    const carol = await server.account('carol');
    const publicId = /^dss_([0-9a-f]{12})_/.exec(carol.key)?.[1] as string;
    const hex = createHash('sha256').update(`key:${publicId}`).digest('hex').slice(0, 12);
    const policy = `"api-key"; q=${QUOTA}; w=60; pk=:${Buffer.from(hex).toString('base64')}:`;
    expect((await as(carol, '/domains')).headers.get('ratelimit-policy')).toBe(policy);
    expect((await as(carol, '/spaces')).headers.get('ratelimit-policy')).toBe(policy);
  });

  it('counts a 304 like any other answer: If-None-Match (an ETag or *) buys no reads past the quota', async () => {
    const dave = await server.account('dave');
    const created = await as(dave, '/spaces', { method: 'POST', body: new URLSearchParams({ name: 'Kept' }) });
    const id = ((await created.json()) as { data?: { id: number } }).data?.id;
    expect(id).toBeTypeOf('number');
    const etag = created.headers.get('etag') as string;
    const statuses: number[] = [];
    for (let i = 0; i < QUOTA + 2; i++) {
      const tag = i % 2 ? '*' : etag;
      statuses.push((await as(dave, `/spaces/${id}`, { headers: { 'If-None-Match': tag } })).status);
    }
    // The create used one request of the quota; each revalidation uses one more.
    expect(statuses).toEqual([...Array(QUOTA - 1).fill(304), 429, 429, 429]);
  });
});

describe('the failed-authentication guard per address', () => {
  let server: TestServer;
  let alice: TestAccount;
  const FAILURES = 5;

  beforeAll(async () => {
    server = await startServer({
      rateLimit: { perKey: { limit: 100, windowSeconds: 60 }, authFailures: { limit: FAILURES, windowSeconds: 60 } },
      trustProxy: ['loopback'],
    });
    alice = await server.account('alice');
  });
  afterAll(() => server.close());

  const from = (address: string, authorization?: string, path = '/api/v1/domains') =>
    server.fetch(path, {
      headers: { 'X-Forwarded-For': address, ...(authorization ? { Authorization: authorization } : {}) },
    });

  it('answers 401 with the address budget, then 429 with Retry-After after a burst, even with no key at all', async () => {
    for (let failure = 1; failure <= FAILURES; failure++) {
      const answer = await from('203.0.113.7', failure % 2 ? WRONG_KEY : undefined);
      expect(answer.status).toBe(401);
      expect(policyItem(answer.headers.get('ratelimit-policy'))).toMatchObject({ name: 'failed-auth', q: FAILURES });
      expect(policyItem(answer.headers.get('ratelimit'))).toMatchObject({ name: 'failed-auth', r: FAILURES - failure });
    }
    for (const authorization of [WRONG_KEY, undefined, 'Basic eHl6']) {
      const blocked = await from('203.0.113.7', authorization);
      expect(blocked.status).toBe(429);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(blocked.headers.get('www-authenticate')).toBeNull();
      expect(await blocked.json()).toMatchObject({
        type: `${PROBLEM_TYPE_BASE}too-many-failed-authentications`,
        status: 429,
      });
    }
  });

  it('never refuses a valid key for its address: clients behind one address are not locked out', async () => {
    for (let failure = 0; failure <= FAILURES; failure++) await from('203.0.113.8', WRONG_KEY);
    expect((await from('203.0.113.8', WRONG_KEY)).status).toBe(429);
    const valid = await from('203.0.113.8', `Bearer ${alice.key}`);
    expect(valid.status).toBe(200);
    expect(policyItem(valid.headers.get('ratelimit'))).toMatchObject({ name: 'api-key' });
  });

  it('counts each address on its own, read from X-Forwarded-For only from a trusted proxy', async () => {
    for (let failure = 0; failure <= FAILURES; failure++) await from('203.0.113.9', WRONG_KEY);
    expect((await from('203.0.113.9', WRONG_KEY)).status).toBe(429);
    expect((await from('203.0.113.10', WRONG_KEY)).status).toBe(401);
  });

  it('tells an answer given before the key check (an unknown path) where the address stands, and counts only 401s', async () => {
    const answer = await from('203.0.113.11', undefined, '/api/v1/nowhere');
    expect(answer.status).toBe(404);
    // express-rate-limit shows the state with this request counted; it is given back once answered.
    expect(policyItem(answer.headers.get('ratelimit'))).toMatchObject({ name: 'failed-auth', r: FAILURES - 1 });
    expect(policyItem(answer.headers.get('ratelimit-policy'))).toMatchObject({ name: 'failed-auth', q: FAILURES });
    for (let again = 0; again < FAILURES + 1; again++) {
      expect((await from('203.0.113.11', WRONG_KEY, '/api/v1/nowhere')).status).toBe(404);
    }
    const refused = await from('203.0.113.11', WRONG_KEY);
    expect(refused.status).toBe(401);
    expect(policyItem(refused.headers.get('ratelimit'))).toMatchObject({ name: 'failed-auth', r: FAILURES - 1 });
  });

  it('never turns an unknown path into a 429, even for an address over its budget', async () => {
    for (let failure = 0; failure <= FAILURES; failure++) await from('203.0.113.12', WRONG_KEY);
    const answer = await from('203.0.113.12', WRONG_KEY, '/api/v1/nowhere');
    expect(answer.status).toBe(404);
    expect(answer.headers.get('retry-after')).toBeNull();
  });
});

describe('an untrusted X-Forwarded-For', () => {
  it('is ignored: a client cannot pick a fresh address for each guess', async () => {
    const server = await startServer({ rateLimit: { authFailures: { limit: 2, windowSeconds: 60 } } });
    try {
      const statuses: number[] = [];
      for (let guess = 0; guess < 4; guess++) {
        const answer = await server.fetch('/api/v1/domains', {
          headers: { Authorization: WRONG_KEY, 'X-Forwarded-For': `198.51.100.${guess}` },
        });
        statuses.push(answer.status);
      }
      expect(statuses).toEqual([401, 401, 429, 429]);
    } finally {
      await server.close();
    }
  });
});

describe('without rate limits', () => {
  it('sends no RateLimit fields and never answers 429', async () => {
    const server = await startServer();
    try {
      const { key } = await server.account();
      for (let request = 0; request < 30; request++) {
        const answer = await server.fetch('/api/v1/spaces', { headers: { Authorization: `Bearer ${key}` } });
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
        expect(answer.headers.get('ratelimit-policy')).toBeNull();
      }
    } finally {
      await server.close();
    }
  });
});

describe('configuration', () => {
  it.each([
    ['600/60', { limit: 600, windowSeconds: 60 }],
    [' 20/60 ', { limit: 20, windowSeconds: 60 }],
    ['off', 'off'],
  ])('reads RATE_LIMIT=%j', (value, expected) => {
    expect(parseQuota('RATE_LIMIT', value)).toEqual(expected);
  });

  it.each(['', '0/60', '10/0', '10', '10/60s', 'ten/60', '-1/60', '1.5/60'])('refuses RATE_LIMIT=%j', (value) => {
    expect(parseQuota('RATE_LIMIT', value)).toEqual({ error: expect.stringContaining('RATE_LIMIT must be') });
  });

  it.each([
    ['off', false],
    ['1', 1],
    ['loopback, 10.0.0.0/8,::1', ['loopback', '10.0.0.0/8', '::1']],
  ])('reads TRUST_PROXY=%j', (value, expected) => {
    expect(parseTrustProxy(value)).toEqual(expected);
  });

  it.each(['true', '10.0.0.0/33', 'example.com', '1.2.3'])('refuses TRUST_PROXY=%j', (value) => {
    expect(parseTrustProxy(value)).toEqual({ error: expect.stringContaining('TRUST_PROXY must be') });
  });

  it('defaults to 600/60 per key, 20/60 failures per address, memory counters, no proxy', () => {
    expect(readConfig({})).toMatchObject({
      rateLimit: { limit: 600, windowSeconds: 60 },
      authFailureLimit: { limit: 20, windowSeconds: 60 },
      redisUrl: undefined,
      trustProxy: false,
    });
    expect(readConfig({ RATE_LIMIT: 'off', AUTH_FAILURE_LIMIT: 'off' })).toMatchObject({
      rateLimit: undefined,
      authFailureLimit: undefined,
    });
  });

  it('names every bad rate-limit setting at once', () => {
    expect(() =>
      readConfig({ RATE_LIMIT: 'lots', AUTH_FAILURE_LIMIT: '0/1', REDIS_URL: 'localhost:6379', TRUST_PROXY: 'yes' }),
    ).toThrow(/RATE_LIMIT[\s\S]*AUTH_FAILURE_LIMIT[\s\S]*REDIS_URL[\s\S]*TRUST_PROXY/);
  });
});
