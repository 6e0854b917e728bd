// ETags on show, store and update; GET with If-None-Match answers 304; PUT, PATCH and DELETE with an If-Match
// that names no current version answer 412 and change nothing, atomically, also for two writers racing; an update
// to the values a record already has changes nothing (version, ETag, updated_at); a malformed If-Match is a 422.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';

const { server, account: alice } = await serverForFile();
const bob = await server.account('bob');

const ETAG = /^"\d+\.\d+"$/;
const RESOURCES = [
  {
    resource: 'domains',
    create: (n: number) => ({ name: `etag-${n}-${Date.now()}.example.com` }),
    change: (n: number) => ({ index_page: `https://example.com/${n}` }),
  },
  {
    resource: 'spaces',
    create: (n: number) => ({ name: `Space ${n}`, color: 1 }),
    // Never the colour a space is created with, so that every change changes something.
    change: (n: number) => ({ color: (n % 5) + 2 }),
  },
];
let made = 0;

function call(
  method: string,
  path: string,
  { headers = {}, body, key = alice.key }: { headers?: Record<string, string>; body?: object; key?: string } = {},
) {
  return server.fetch(`/api/v1${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
}

describe.each(RESOURCES)('$resource', ({ resource, create, change }) => {
  async function created(): Promise<{ path: string; etag: string; body: unknown }> {
    const response = await call('POST', `/${resource}`, { body: create(++made) });
    expect(response.status).toBe(201);
    return {
      path: response.headers.get('location')?.replace('/api/v1', '') ?? '',
      etag: response.headers.get('etag') ?? '',
      body: await response.json(),
    };
  }

  it('sends a strong ETag on store, show and update that changes with each change', async () => {
    const record = await created();
    expect(record.etag).toMatch(ETAG);
    const shown = await call('GET', record.path);
    expect(shown.headers.get('etag')).toBe(record.etag);
    const updated = await call('PATCH', record.path, { body: change(1) });
    const newTag = updated.headers.get('etag');
    expect(newTag).toMatch(ETAG);
    expect(newTag).not.toBe(record.etag);
    expect((await call('GET', record.path)).headers.get('etag')).toBe(newTag);
  });

  it('keeps the ETag for an update that changes nothing', async () => {
    const record = await created();
    const updated = await call('PUT', record.path, { body: {} });
    expect(updated.headers.get('etag')).toBe(record.etag);
  });

  it.each(['PUT', 'PATCH'])(
    'keeps version, ETag and updated_at for a %s of the values the record has',
    async (method) => {
      const record = await created();
      const changed = await call('PATCH', record.path, { body: change(1) });
      const before = (await changed.json()) as { data: { updated_at: string } };
      const again = await call(method, record.path, {
        headers: { 'If-Match': changed.headers.get('etag') ?? '' },
        body: change(1),
      });
      expect(again.status).toBe(200);
      expect(again.headers.get('etag')).toBe(changed.headers.get('etag'));
      expect(await again.json()).toEqual(before);
      const shown = await call('GET', record.path);
      expect(shown.headers.get('etag')).toBe(changed.headers.get('etag'));
      expect(((await shown.json()) as typeof before).data.updated_at).toBe(before.data.updated_at);
      const stale = await call(method, record.path, { headers: { 'If-Match': record.etag }, body: change(1) });
      expect(stale.status).toBe(412);
    },
  );

  it.each(['PATCH', 'DELETE'])(
    'answers %s with a malformed If-Match with a 422 naming it, and changes nothing',
    async (method) => {
      const record = await created();
      const response = await call(method, record.path, { headers: { 'If-Match': 'garbage' }, body: change(2) });
      expect(response.status).toBe(422);
      expect(await response.json()).toMatchObject({
        type: '/problems/invalid-if-match',
        errors: [{ location: 'header', field: 'If-Match' }],
      });
      expect((await call('GET', record.path)).headers.get('etag')).toBe(record.etag);
    },
  );

  it.each([
    { header: (tag: string) => tag, what: 'the current ETag' },
    { header: (tag: string) => `W/${tag}`, what: 'its weak form' },
    { header: (tag: string) => `"0.1", ${tag}`, what: 'a list holding it' },
    { header: () => '*', what: '*' },
  ])('answers 304 with the ETag and no body to If-None-Match with $what', async ({ header }) => {
    const record = await created();
    const response = await call('GET', record.path, { headers: { 'If-None-Match': header(record.etag) } });
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe(record.etag);
    expect(await response.text()).toBe('');
  });

  it('answers 200 with the body to an If-None-Match naming an older version', async () => {
    const record = await created();
    await call('PATCH', record.path, { body: change(2) });
    const response = await call('GET', record.path, { headers: { 'If-None-Match': record.etag } });
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).not.toBe(record.etag);
  });

  it.each(['PUT', 'PATCH'])('%s with a stale If-Match answers 412 and changes nothing', async (method) => {
    const record = await created();
    const current = await call('PATCH', record.path, { body: change(3) });
    const before = await current.json();
    const stale = await call(method, record.path, { headers: { 'If-Match': record.etag }, body: change(4) });
    expect(stale.status).toBe(412);
    expect(stale.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await stale.json()).toMatchObject({ type: '/problems/precondition-failed' });
    const after = await call('GET', record.path);
    expect(await after.json()).toEqual(before);
  });

  it.each([
    { header: () => '"bogus"', what: 'a tag that is not ours' },
    { header: (tag: string) => `W/${tag}`, what: 'the weak form of the current tag (If-Match compares strongly)' },
  ])('answers 412 to an If-Match with $what', async ({ header }) => {
    const record = await created();
    const response = await call('PATCH', record.path, {
      headers: { 'If-Match': header(record.etag) },
      body: change(5),
    });
    expect(response.status).toBe(412);
    expect((await call('GET', record.path)).headers.get('etag')).toBe(record.etag);
  });

  it.each([
    { header: (tag: string) => tag, what: 'the current ETag' },
    { header: (tag: string) => `"1.99", ${tag}`, what: 'a list holding it' },
    { header: () => '*', what: '*' },
  ])('updates with an If-Match of $what', async ({ header }) => {
    const record = await created();
    const response = await call('PUT', record.path, { headers: { 'If-Match': header(record.etag) }, body: change(6) });
    expect(response.status).toBe(200);
  });

  it('checks If-Match on an update that sends the values the record already has, too', async () => {
    const record = await created();
    const current = await call('PATCH', record.path, { body: change(8) });
    const same = await call('PATCH', record.path, { headers: { 'If-Match': record.etag }, body: change(8) });
    expect(same.status).toBe(412);
    const unconditional = await call('PATCH', record.path, { body: change(8) });
    expect(unconditional.status).toBe(200);
    expect(unconditional.headers.get('etag')).toBe(current.headers.get('etag'));
    expect(await unconditional.json()).toEqual(await current.json());
  });

  it('checks If-Match on an update that sends no fields, too', async () => {
    const record = await created();
    await call('PATCH', record.path, { body: change(7) });
    const response = await call('PATCH', record.path, { headers: { 'If-Match': record.etag }, body: {} });
    expect(response.status).toBe(412);
  });

  it('deletes with a matching If-Match, answers 412 to a stale one and keeps the record', async () => {
    const record = await created();
    await call('PATCH', record.path, { body: change(8) });
    expect((await call('DELETE', record.path, { headers: { 'If-Match': record.etag } })).status).toBe(412);
    expect((await call('GET', record.path)).status).toBe(200);
    const current = (await call('GET', record.path)).headers.get('etag') ?? '';
    expect((await call('DELETE', record.path, { headers: { 'If-Match': current } })).status).toBe(204);
    expect((await call('GET', record.path)).status).toBe(404);
  });

  it('answers 404, not 412, for a record that does not exist or is another account’s', async () => {
    const record = await created();
    for (const method of ['PATCH', 'DELETE']) {
      const other = await call(method, record.path, { key: bob.key, headers: { 'If-Match': '*' }, body: {} });
      expect(other.status).toBe(404);
    }
    const missing = await call('GET', `/${resource}/999999`, { headers: { 'If-None-Match': '*' } });
    expect(missing.status).toBe(404);
  });

  it('lets exactly one of two writers holding the same ETag win, every time', async () => {
    for (let round = 0; round < 20; round++) {
      const record = await created();
      const headers = { 'If-Match': record.etag };
      const answers = await Promise.all([
        call(round % 2 === 0 ? 'PUT' : 'PATCH', record.path, { headers, body: change(round) }),
        call('PATCH', record.path, { headers, body: change(round + 1) }),
      ]);
      expect(answers.map((a) => a.status).sort(), `round ${round}`).toEqual([200, 412]);
      const winner = answers.find((a) => a.status === 200);
      expect((await call('GET', record.path)).headers.get('etag')).toBe(winner?.headers.get('etag'));
    }
  });

  it('lets exactly one of a delete and an update holding the same ETag win, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const record = await created();
      const headers = { 'If-Match': record.etag };
      const [removed, updated] = await Promise.all([
        call('DELETE', record.path, { headers }),
        call('PATCH', record.path, { headers, body: change(round) }),
      ]);
      // Whichever ran second lost: a delete after the update is 412; an update after the delete finds nothing.
      const outcome = [removed.status, updated.status];
      expect(
        [
          [204, 404],
          [412, 200],
        ],
        `round ${round}: ${outcome}`,
      ).toContainEqual(outcome);
    }
  });
});
