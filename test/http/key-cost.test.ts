// What a key's policy costs a request: nothing from the database. Its scopes, expiry and address ranges travel
// with the cached key, so once a key is cached, its requests (answered, or refused for scope, for an address or
// for expiry) read the keys table not once more. Counted with a kysely plugin on the connection the key check uses.
import type { AddressInfo } from 'node:net';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cachedAuthenticator, issueKey } from '../../server/accounts/keys.js';
import { createApp } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { sharedValidation } from '../support/server.js';

/** Counts the statements that name the keys table (reads and the last-used writes). */
class KeyTableReads implements KyselyPlugin {
  reads = 0;
  transformQuery(args: PluginTransformQueryArgs) {
    if (args.node.kind === 'SelectQueryNode' && JSON.stringify(args.node).includes('"api_keys"')) this.reads++;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs) {
    return args.result;
  }
}

let database: TestDatabase;
let db: Database;
let server: ReturnType<Awaited<ReturnType<typeof createApp>>['listen']>;
let origin: string;
const counter = new KeyTableReads();

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
  await migrateToLatest(db);
  const counted = db.withPlugin(counter);
  // A cache lifetime no test run outlasts, so that what the cache holds is certain.
  const app = await createApp({
    db,
    validation: sharedValidation(),
    keyCheck: cachedAuthenticator(counted, 600_000),
    trustProxy: ['loopback'],
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await db.destroy();
  await database.drop();
});

const send = async (key: string, method: string, path: string, from = '10.0.0.1') =>
  (
    await fetch(`${origin}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, 'X-Forwarded-For': from },
    })
  ).status;

describe('a key with a policy', () => {
  it('reads the keys table once, then never again for its answers or refusals', async () => {
    const { key } = await issueKey(db, 'costly', {
      scopes: ['spaces:read'],
      expiresAt: new Date(Date.now() + 86_400_000),
      allowedIps: ['10.0.0.0/8'],
    });
    expect(await send(key, 'GET', '/spaces')).toBe(200);
    const after = counter.reads;
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(await send(key, 'GET', '/spaces'));
      statuses.push(await send(key, 'DELETE', '/spaces/1'));
      statuses.push(await send(key, 'GET', '/domains'));
      statuses.push(await send(key, 'GET', '/spaces', '192.0.2.1'));
    }
    expect(new Set(statuses)).toEqual(new Set([200, 403]));
    expect(counter.reads - after).toBe(0);
  });

  it('costs the same single read as a key without one', async () => {
    const { key } = await issueKey(db, 'plain');
    const before = counter.reads;
    for (let i = 0; i < 10; i++) expect(await send(key, 'GET', '/spaces')).toBe(200);
    expect(counter.reads - before).toBe(1);
  });
});
