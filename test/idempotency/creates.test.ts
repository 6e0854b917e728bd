// POST /domains and /spaces with an Idempotency-Key: the first answer is saved and replayed for a repeat with
// the same payload, another payload is 422, a repeat while the first runs is 409, keys belong to an account.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fingerprintOf } from '../../server/idempotency/runner.js';
import { serverForFile } from '../support/file-server.js';
import type { TestAccount } from '../support/server.js';

const { server, account: alice } = await serverForFile();
const bob = await server.account('bob');

type Fields = Record<string, string | number>;

function post(
  path: '/domains' | '/spaces',
  fields: Fields,
  { key, as = alice, json = false }: { key?: string; as?: TestAccount; json?: boolean } = {},
) {
  const headers: Record<string, string> = { Authorization: `Bearer ${as.key}` };
  if (key !== undefined) headers['Idempotency-Key'] = key;
  headers['Content-Type'] = json ? 'application/json' : 'application/x-www-form-urlencoded';
  const body = json
    ? JSON.stringify(fields)
    : new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, String(v)])).toString();
  return server.fetch(`/api/v1${path}`, { method: 'POST', headers, body });
}

async function count(table: 'domains' | 'spaces', name: string): Promise<number> {
  const rows = await server.db.selectFrom(table).select('id').where('name', '=', name).execute();
  return rows.length;
}

const RESOURCES = [
  { path: '/domains' as const, table: 'domains' as const, fields: (n: string) => ({ name: `${n}.example.com` }) },
  { path: '/spaces' as const, table: 'spaces' as const, fields: (n: string) => ({ name: `Space ${n}`, color: 3 }) },
];

describe.each(RESOURCES)('POST $path with an Idempotency-Key', ({ path, table, fields }) => {
  it('replays the first answer (status, body, Location, ETag) with Idempotent-Replayed and creates one record', async () => {
    const key = randomUUID();
    const sent = fields(`replay-${key.slice(0, 8)}`);
    const first = await post(path, sent, { key });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const firstBody = await first.json();

    const again = await post(path, sent, { key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('location')).toBe(first.headers.get('location'));
    expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(again.headers.get('x-request-id')).not.toBe(first.headers.get('x-request-id'));
    expect(await again.json()).toEqual(firstBody);
    expect(await count(table, firstBody.data.name)).toBe(1);
  });

  it('treats the same values sent as JSON and as a form as the same payload', async () => {
    const key = randomUUID();
    const sent = fields(`encodings-${key.slice(0, 8)}`);
    expect((await post(path, sent, { key })).status).toBe(201);
    const again = await post(path, sent, { key, json: true });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });

  it('answers 422 for the same key with another payload, and creates nothing', async () => {
    const key = randomUUID();
    expect((await post(path, fields(`first-${key.slice(0, 8)}`), { key })).status).toBe(201);
    const other = fields(`other-${key.slice(0, 8)}`);
    const reused = await post(path, other, { key });
    expect(reused.status).toBe(422);
    expect(reused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await reused.json()).toMatchObject({
      type: '/problems/idempotency-key-reused',
      status: 422,
    });
    expect(await count(table, other.name)).toBe(0);
  });

  it('scopes keys to the account: another account may use the same key', async () => {
    const key = randomUUID();
    const mine = await post(path, fields(`alice-${key.slice(0, 8)}`), { key });
    const theirs = await post(path, fields(`bob-${key.slice(0, 8)}`), { key, as: bob });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect((await theirs.json()).data.id).not.toBe((await mine.json()).data.id);
  });

  it('does not use the key up on a request that fails validation', async () => {
    const key = randomUUID();
    const rejected = await post(path, { ...fields('x'), name: '' }, { key });
    expect(rejected.status).toBe(422);
    const accepted = await post(path, fields(`after-invalid-${key.slice(0, 8)}`), { key });
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('idempotent-replayed')).toBeNull();
  });

  it('creates exactly one record when the same request is sent many times at once', async () => {
    const key = randomUUID();
    const sent = fields(`burst-${key.slice(0, 8)}`);
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(path, sent, { key })));
    const statuses = answers.map((a) => a.status);
    // Each repeat either waited for nothing (409: the first was still running) or got the saved 201.
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    expect(answers.filter((a) => a.status === 201 && !a.headers.get('idempotent-replayed'))).toHaveLength(1);
    expect(await count(table, sent.name)).toBe(1);
  });
});

describe('Idempotency-Key values', () => {
  it.each([
    { value: 'x'.repeat(256), what: 'over 255 characters' },
    { value: 'café', what: 'not ASCII' },
    { value: 'tab\there', what: 'a control character' },
  ])('rejects a key that is $what with 422 naming the header', async ({ value }) => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${alice.key}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': value,
      },
      body: JSON.stringify({ name: `bad key ${value.length}` }),
    });
    expect(response.status).toBe(422);
    const problem = await response.json();
    expect(problem.errors).toEqual([expect.objectContaining({ location: 'header', field: 'Idempotency-Key' })]);
    expect(await count('spaces', `bad key ${value.length}`)).toBe(0);
  });

  it('accepts 255 printable characters', async () => {
    const key = `${randomUUID()} ~!`.padEnd(255, 'k');
    expect((await post('/spaces', { name: 'Longest key' }, { key })).status).toBe(201);
    expect((await post('/spaces', { name: 'Longest key' }, { key })).headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('the saved answers', () => {
  async function keyRow(key: string) {
    return server.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
  }

  it('answers 409 while a request with the key is still running, and leaves no record', async () => {
    const key = randomUUID();
    expect((await post('/spaces', { name: 'Running' }, { key })).status).toBe(201);
    // The same state as a first request that has claimed the key and not committed yet.
    await server.db
      .updateTable('idempotency_keys')
      .set({ status: null, body: null, headers: null, lock_token: 'other', locked_at: new Date().toISOString() })
      .where('key', '=', key)
      .execute();
    const repeat = await post('/spaces', { name: 'Running' }, { key });
    expect(repeat.status).toBe(409);
    expect(await repeat.json()).toMatchObject({
      type: '/problems/idempotency-key-in-use',
    });
    expect(await count('spaces', 'Running')).toBe(1);
  });

  it('lets a repeat take over a key left pending by a request that died (after the lock timeout)', async () => {
    const key = randomUUID();
    const at = new Date(Date.now() - 60_000).toISOString();
    const account = await server.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'alice')
      .executeTakeFirstOrThrow();
    await server.db
      .insertInto('idempotency_keys')
      .values({
        account_id: account.id,
        key,
        fingerprint: fingerprintOf('POST', '/api/v1/spaces', { name: 'Recovered' }),
        lock_token: 'dead',
        locked_at: at,
        created_at: at,
      })
      .execute();
    const response = await post('/spaces', { name: 'Recovered' }, { key, as: alice });
    expect(response.status).toBe(201);
    expect((await keyRow(key)).status).toBe(201);
  });

  it('keeps a key 24 hours: an expired key is used afresh', async () => {
    const key = randomUUID();
    const first = await post('/spaces', { name: 'Yesterday' }, { key });
    expect(first.status).toBe(201);
    const long = new Date(Date.now() - 25 * 60 * 60 * 1000).toISOString();
    await server.db.updateTable('idempotency_keys').set({ created_at: long }).where('key', '=', key).execute();
    const again = await post('/spaces', { name: 'Yesterday' }, { key });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await count('spaces', 'Yesterday')).toBe(2);
  });

  it('saves and replays a 409 for a domain name the account has already', async () => {
    const name = `taken-${randomUUID().slice(0, 8)}.example.com`;
    expect((await post('/domains', { name })).status).toBe(201);
    const key = randomUUID();
    const first = await post('/domains', { name }, { key });
    expect(first.status).toBe(409);
    const again = await post('/domains', { name }, { key });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await again.json()).toEqual(await first.json());
  });

  it('stores the key in the same transaction as the record: every saved 201 names a record that exists', async () => {
    const rows = await server.db.selectFrom('idempotency_keys').selectAll().where('status', '=', 201).execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      const location = JSON.parse(row.headers ?? '{}').Location as string;
      const [, , , table, id] = location.split('/');
      const found = await server.db
        .selectFrom(table as 'spaces')
        .select('id')
        .where('id', '=', Number(id))
        .executeTakeFirst();
      // A record may have been deleted since, but never be missing without a delete: none is deleted here.
      expect(found, location).toBeDefined();
    }
  });
});
