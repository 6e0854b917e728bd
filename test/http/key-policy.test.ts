// A key's expiry, address ranges and rotation as a client meets them: an expired key is a 401 that says it
// expired and when, a key used from outside its ranges (the client address as TRUST_PROXY makes it) a 403 that
// says so, and a rotated key works through its overlap and is refused after it, saying which key replaced it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, rotateKey } from '../../server/accounts/keys.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  // Behind a balancer on loopback: the client address is the one X-Forwarded-For names.
  server = await startServer({ trustProxy: ['loopback'] });
});
afterAll(() => server.close());

const get = (key: string, from?: string) =>
  server.fetch('/api/v1/spaces', {
    headers: { Authorization: `Bearer ${key}`, ...(from ? { 'X-Forwarded-For': from } : {}) },
  });

describe('an expiry', () => {
  it('refuses a key past its expiry with a 401 that says it expired, and when', async () => {
    const expiresAt = new Date(Date.now() - 1000);
    const { key } = await issueKey(server.db, 'expired', { expiresAt });
    const response = await get(key);
    const problem = await expectProblem(response, 401);
    expect(problem.type).toBe('/problems/key-expired');
    expect(problem.detail).toContain(`expired at ${expiresAt.toISOString()}`);
    expect(response.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('serves a key until its expiry, and refuses it from then on though it is cached', async () => {
    const expiresAt = Date.now() + 1500;
    const { key } = await issueKey(server.db, 'expiring', { expiresAt: new Date(expiresAt) });
    expect((await get(key)).status).toBe(200);
    await expect.poll(async () => (await get(key)).status, { timeout: 10_000, interval: 50 }).toBe(401);
    // The expiry is checked against the clock on every request: the cache does not prolong it.
    expect(Date.now() - expiresAt).toBeLessThan(1000);
  });

  it('gives a wrong secret for an expired key the 401 of an unknown key, not the expiry', async () => {
    const { key } = await issueKey(server.db, 'expired-guess', { expiresAt: new Date(Date.now() - 1000) });
    const problem = await expectProblem(await get(`${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`), 401);
    expect(problem.type).toBe('/problems/unauthorized');
  });
});

describe('address ranges', () => {
  it('serves a key from inside its ranges, IPv4 and IPv6', async () => {
    const { key } = await issueKey(server.db, 'ranged', { allowedIps: ['10.0.0.0/8', '2001:db8::/32'] });
    expect((await get(key, '10.20.30.40')).status).toBe(200);
    expect((await get(key, '2001:db8::7')).status).toBe(200);
  });

  it('refuses it from outside with a 403 that names the address, not the ranges', async () => {
    const { key } = await issueKey(server.db, 'ranged-out', { allowedIps: ['10.0.0.0/8'] });
    const problem = await expectProblem(await get(key, '203.0.113.9'), 403);
    expect(problem.type).toBe('/problems/address-not-allowed');
    expect(problem.detail).toContain('203.0.113.9');
    expect(problem.detail).not.toContain('10.0.0.0');
  });

  it('judges the address Express computes, not any X-Forwarded-For a client sends', async () => {
    const direct = await startServer({ trustProxy: false });
    try {
      const { key } = await issueKey(direct.db, 'spoofer', { allowedIps: ['10.0.0.0/8'] });
      const response = await direct.fetch('/api/v1/spaces', {
        headers: { Authorization: `Bearer ${key}`, 'X-Forwarded-For': '10.1.1.1' },
      });
      await expectProblem(response, 403);
    } finally {
      await direct.close();
    }
  });
});

describe('rotation', () => {
  it('keeps the old key working during the overlap, beside its successor', async () => {
    const { key, publicId } = await issueKey(server.db, 'rotating', { scopes: ['spaces:read'] });
    const result = await rotateKey(server.db, publicId, 3_600_000);
    if (!('rotated' in result)) throw new Error(`not rotated: ${result.refused}`);
    expect((await get(key)).status).toBe(200);
    expect((await get(result.rotated.key)).status).toBe(200);
    // The successor keeps the scopes: spaces:read only.
    const write = await server.fetch('/api/v1/spaces/1', {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${result.rotated.key}` },
    });
    await expectProblem(write, 403);
  });

  it('refuses the old key after the overlap, naming the key that replaced it', async () => {
    const { key, publicId } = await issueKey(server.db, 'rotated');
    expect((await get(key)).status).toBe(200);
    const result = await rotateKey(server.db, publicId, 0);
    if (!('rotated' in result)) throw new Error(`not rotated: ${result.refused}`);
    // The old key was cached a moment ago: its row's new expiry reaches the cache within its lifetime.
    await expect.poll(async () => (await get(key)).status, { timeout: 5_000, interval: 50 }).toBe(401);
    const problem = await expectProblem(await get(key), 401);
    expect(problem.type).toBe('/problems/key-expired');
    expect(problem.detail).toContain(`replaced by key ${result.rotated.publicId}`);
    expect((await get(result.rotated.key)).status).toBe(200);
  });

  it('rotates a key once: a second rotation names the successor', async () => {
    const { publicId } = await issueKey(server.db, 'rotated-twice');
    const first = await rotateKey(server.db, publicId, 60_000);
    const second = await rotateKey(server.db, publicId, 60_000);
    expect('rotated' in first).toBe(true);
    expect(second).toEqual({ refused: 'rotated', detail: 'rotated' in first ? first.rotated.publicId : '' });
  });
});
