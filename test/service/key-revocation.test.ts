// The key cache (server/accounts/keys.ts) against revocation: a key revoked (or rotated without overlap) while
// a server is using it stops working within the cache's lifetime, whether the keys command or another process
// did it, and an unknown or revoked key is never remembered as valid.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, KEY_CACHE_TTL_MS, revokeKey, rotateKey } from '../../server/accounts/keys.js';
import { startServer, type TestServer } from '../support/server.js';
import { runToExit, stopAll } from './process.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await stopAll();
  await server.close();
});

const statusOf = async (key: string) =>
  (await fetch(`${server.apiUrl}/spaces`, { headers: { Authorization: `Bearer ${key}` } })).status;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('key cache', { timeout: 60_000 }, () => {
  it('keeps the cache lifetime within 1 s', () => {
    expect(KEY_CACHE_TTL_MS).toBeLessThanOrEqual(1000);
  });

  it('refuses a key revoked by the keys command within 1 s, though it was just used', async () => {
    const { key, publicId } = await issueKey(server.db, 'cli-revokee');
    expect(await statusOf(key)).toBe(200);
    const exit = await runToExit('scripts/keys.mjs', ['revoke', publicId], {
      DATABASE_URL: server.databaseUrl,
      LOG_LEVEL: 'silent',
    });
    expect(exit.code).toBe(0);
    await pause(1000);
    expect(await statusOf(key)).toBe(401);
  });

  it('refuses a key revoked in the database within 1 s, while it is in use all along', async () => {
    const { key } = await issueKey(server.db, 'busy-revokee');
    // A steady stream of requests keeps the key in the cache up to the moment of revocation.
    for (let i = 0; i < 5; i++) expect(await statusOf(key)).toBe(200);
    expect(await revokeKey(server.db, key)).toBe(true);
    await pause(1000);
    expect(await Promise.all([statusOf(key), statusOf(key), statusOf(key)])).toEqual([401, 401, 401]);
  });

  it('refuses a key rotated with no overlap within 1 s, while it is in use all along; its successor works', async () => {
    const { key, publicId } = await issueKey(server.db, 'busy-rotatee');
    for (let i = 0; i < 5; i++) expect(await statusOf(key)).toBe(200);
    const rotation = await rotateKey(server.db, publicId, 0);
    if (!('rotated' in rotation)) throw new Error(`not rotated: ${rotation.refused}`);
    await pause(1000);
    expect(await Promise.all([statusOf(key), statusOf(key), statusOf(rotation.rotated.key)])).toEqual([401, 401, 200]);
  });

  it('checks the secret on every request, even while the key is cached', async () => {
    const { key } = await issueKey(server.db, 'secret-check');
    expect(await statusOf(key)).toBe(200);
    const wrongSecret = `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;
    expect(await statusOf(wrongSecret)).toBe(401);
    expect(await statusOf(key)).toBe(200);
  });
});
