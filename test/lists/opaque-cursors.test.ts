// Cursors say nothing to whoever reads a URL, a log or a proxy's record: sealed (AES-256-GCM), they carry no
// record name, sort or id, a forged or garbled one is a 422 naming `after`, and one made by an instance is good
// on every other instance of the same database and after a restart (the key is the database's own).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { createApp } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { fieldsOf } from '../support/problems.js';
import { sharedValidation } from '../support/server.js';

interface Instance {
  origin: string;
  close(): Promise<void>;
}

let database: TestDatabase;
let migrated: Database;
let key: string;
const running = new Set<Instance>();

/** An instance of the app on the shared database, with a connection of its own, as a second process has. */
async function instance(): Promise<Instance> {
  const db = openDatabase(database.url);
  const server = (await createApp({ db, validation: sharedValidation() })).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const started: Instance = {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      running.delete(started);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
    },
  };
  running.add(started);
  return started;
}

async function list(at: Instance, query: string) {
  const response = await fetch(`${at.origin}/api/v1/spaces?${query}`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: response.status, body: await response.json() };
}

const cursorOf = (link: string) => new URL(link, 'http://host').searchParams.get('after') as string;

beforeAll(async () => {
  database = await freshDatabase();
  migrated = openDatabase(database.url);
  await migrateToLatest(migrated);
  ({ key } = await issueKey(migrated, 'alice'));
  const account = await migrated
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', 'alice')
    .executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  await migrated
    .insertInto('spaces')
    .values(
      Array.from({ length: 25 }, (_, i) => ({
        account_id: account.id,
        name: `alice confidential ${String(i).padStart(2, '0')}`,
        name_key: `alice confidential ${String(i).padStart(2, '0')}`,
        color: 1,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
});
afterAll(async () => {
  await Promise.all([...running].map((started) => started.close()));
  await migrated?.destroy();
  await database?.drop();
});

describe('list cursors', () => {
  let first: Instance;
  let next: string;
  beforeAll(async () => {
    first = await instance();
    const { status, body } = await list(first, 'sort_by=name&sort=asc&per_page=10&after=');
    expect(status).toBe(200);
    next = body.links.next;
  });

  it('carry nothing readable: no name, sort or number of a record', () => {
    const cursor = cursorOf(next);
    const decoded = Buffer.from(cursor, 'base64url').toString('latin1');
    for (const readable of ['confidential', 'alice', '"name"', '"asc"']) expect(decoded).not.toContain(readable);
  });

  it('are good on another instance of the same database, and after a restart', async () => {
    const second = await instance();
    const onSecond = await list(second, new URL(next, 'http://host').search.slice(1));
    expect(onSecond.status).toBe(200);
    expect(onSecond.body.data.map((space: { name: string }) => space.name)[0]).toBe('alice confidential 10');
    await first.close();
    await second.close();
    const restarted = await instance();
    const again = await list(restarted, new URL(next, 'http://host').search.slice(1));
    expect(again.body.data).toEqual(onSecond.body.data);
  });

  it.each([
    ['a cursor built by hand', Buffer.from('["name","asc",10,9,"alice confidential 09"]').toString('base64url')],
    ['a garbled cursor', 'AAAA'],
    ['a cursor with one character changed', 'flip'],
  ])('refuse %s with a 422 naming after', async (_, given) => {
    const at = await instance();
    const cursor =
      given === 'flip'
        ? `${cursorOf(next).slice(0, 20)}${cursorOf(next)[20] === 'A' ? 'B' : 'A'}${cursorOf(next).slice(21)}`
        : given;
    const { status, body } = await list(at, `sort_by=name&sort=asc&per_page=10&after=${cursor}`);
    expect(status).toBe(422);
    expect(body.type).toBe('/problems/invalid-cursor');
    expect(fieldsOf(body)).toEqual(['query:after']);
  });
});
