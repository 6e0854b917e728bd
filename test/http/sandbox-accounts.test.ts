// The sandbox's accounts (server/sandbox.ts), in the real app on a real database: a key's account is made only
// by a request that passes validation, at most SANDBOX_MAX_ACCOUNTS are kept (the least recently used goes,
// with its records), and each account has a quota of its own, whatever prefix its key shares with another.
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import type { RateLimitSettings } from '../../server/http/access/rate-limit.js';
import { sandboxAccounts } from '../../server/sandbox.js';
import { freshDatabase } from '../support/database.js';
import { sharedValidation } from '../support/server.js';

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

async function sandboxApp(maxAccounts: number, rateLimit: RateLimitSettings = {}) {
  const database = await freshDatabase();
  const db: Database = openDatabase(database.url);
  await migrateToLatest(db);
  const app = await createApp({
    db,
    keyCheck: sandboxAccounts(db, maxAccounts),
    rateLimit,
    validation: sharedValidation(),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  stops.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await db.destroy();
    await database.drop();
  });
  const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  const as = (key: string, path: string, init: RequestInit = {}) =>
    fetch(`${api}${path}`, { ...init, headers: { Authorization: `Bearer ${key}`, ...init.headers } });
  const count = async (table: 'accounts' | 'domains' | 'spaces') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { as, count };
}

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('a sandbox account', () => {
  it('is not made by a first request that fails validation (422, 400, 415), only by one that passes', async () => {
    const { as, count } = await sandboxApp(100);
    const key = 'dss_sandbox_invalid_first';
    expect((await as(key, '/spaces', { method: 'POST', headers: FORM, body: 'color=9' })).status).toBe(422);
    expect((await as(key, '/spaces?per_page=0')).status).toBe(422);
    expect((await as(key, '/spaces', { method: 'POST', headers: FORM, body: 'name=%ZZ' })).status).toBe(400);
    expect(
      (await as(key, '/spaces', { method: 'POST', headers: { 'Content-Type': 'text/plain' }, body: 'x' })).status,
    ).toBe(415);
    await expect.poll(() => count('accounts')).toBe(0);
    expect(await count('spaces')).toBe(0);

    const listed = await as(key, '/spaces');
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { meta: { total: number } }).meta.total).toBe(3);
    expect(await count('accounts')).toBe(1);
    // Once made, a refused request no longer takes it away.
    expect((await as(key, '/spaces', { method: 'POST', headers: FORM, body: 'color=9' })).status).toBe(422);
    expect(await count('accounts')).toBe(1);
  });

  it('is one of at most SANDBOX_MAX_ACCOUNTS: making one more deletes the least recently used, records too', async () => {
    const { as, count } = await sandboxApp(3);
    const keys = ['dss_sandbox_one', 'dss_sandbox_two', 'dss_sandbox_three', 'dss_sandbox_four', 'dss_sandbox_five'];
    expect((await as(keys[0] as string, '/spaces', { method: 'POST', headers: FORM, body: 'name=Mine' })).status).toBe(
      201,
    );
    for (const key of keys.slice(1, 3)) expect((await as(key, '/spaces')).status).toBe(200);
    // The first key was used last of the three: the second and then the third go first.
    expect((await as(keys[0] as string, '/spaces')).status).toBe(200);
    for (const key of keys.slice(3)) expect((await as(key, '/domains')).status).toBe(200);
    await expect.poll(() => count('accounts')).toBe(3);
    expect(await count('spaces')).toBe(3 * 3 + 1);
    expect(await count('domains')).toBe(3 * 2);

    const first = (await (await as(keys[0] as string, '/spaces')).json()) as { meta: { total: number } };
    expect(first.meta.total).toBe(4);
    // An evicted key starts over with a fresh account.
    const second = (await (await as(keys[1] as string, '/spaces')).json()) as { meta: { total: number } };
    expect(second.meta.total).toBe(3);
    await expect.poll(() => count('accounts')).toBe(3);
  });

  it('has a quota of its own, though its key shares a dss_<12 hex>_ prefix with another', async () => {
    const { as } = await sandboxApp(100, { perKey: { limit: 3, windowSeconds: 60 } });
    const alice = `dss_3f1c0a9b2d4e_${'a'.repeat(43)}`;
    const bob = `dss_3f1c0a9b2d4e_${'b'.repeat(43)}`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await as(alice, '/spaces')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    expect((await as(bob, '/spaces')).status).toBe(200);
  });

  it('takes a scope suffix: the same account, with only those scopes', async () => {
    const { as } = await sandboxApp(100);
    const full = 'dss_sandbox_zed';
    const listed = (await (await as(full, '/spaces')).json()) as { data: Array<{ id: number }> };
    const id = listed.data[0]?.id as number;
    // ~read: every read scope, on the records of dss_sandbox_zed.
    const read = (await (await as(`${full}~read`, '/spaces')).json()) as { data: Array<{ id: number }> };
    expect(read.data.map((space) => space.id)).toEqual(listed.data.map((space) => space.id));
    const refused = await as(`${full}~read`, `/spaces/${id}`, { method: 'DELETE' });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('x-accepted-scopes')).toBe('spaces:write');
    expect((await as(`${full}~spaces.write`, '/domains')).status).toBe(403);
    expect((await as(`${full}~spaces.write`, `/spaces/${id}`, { method: 'DELETE' })).status).toBe(204);
  });

  it('refuses a suffix that names no scope, saying the rule', async () => {
    const { as } = await sandboxApp(100);
    const response = await as('dss_sandbox_zed~spaces.erase', '/spaces');
    expect(response.status).toBe(401);
    expect(((await response.json()) as { detail: string }).detail).toContain('~spaces.read');
  });
});
