// POST /domains: creating a domain from either encoding, its reply, and what a refused store leaves behind.
import { describe, expect, it } from 'vitest';
import { ENCODINGS } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import { countRows, rowOf, store, TIMESTAMP, uniqueName } from './fixtures.js';

const { server, account: alice } = await serverForFile();

describe('domains_store', () => {
  it('creates a domain from a form body and answers 201 with Location', async () => {
    const { data, response } = await alice.client.POST('/domains', {
      body: { name: 'shop.example.com', index_page: 'https://shop.example.com/welcome.html' },
    });
    expect(response.status).toBe(201);
    expect(data?.data).toMatchObject({
      name: 'shop.example.com',
      index_page: 'https://shop.example.com/welcome.html',
      not_found_page: null,
    });
    expect(response.headers.get('location')).toBe(`/api/v1/domains/${data?.data.id}`);
  });

  it.each(ENCODINGS)('answers a %s store with the whole new record', async (encoding) => {
    const name = uniqueName(encoding);
    const { data, response } = await store(alice, encoding, {
      name,
      index_page: 'https://shop.example.com/welcome.html',
      not_found_page: 'http://shop.example.com/404.html',
    });
    expect(response.status).toBe(201);
    const domain = data?.data;
    expect(domain).toEqual({
      id: expect.any(Number),
      name,
      index_page: 'https://shop.example.com/welcome.html',
      not_found_page: 'http://shop.example.com/404.html',
      status: 'pending',
      verification: {
        type: 'txt',
        name: `_dss-challenge.${name}`,
        value: expect.stringMatching(/^dss-verify=[A-Za-z0-9_-]{22}$/),
      },
      kind: 'subdomain',
      // The ownership record alone: this app has no routing target.
      dns_records: [
        { type: 'TXT', name: `_dss-challenge.${name}`, value: domain?.verification.value, purpose: 'ownership' },
      ],
      routing: {
        code: 'no_target',
        message: expect.stringContaining('no routing target'),
        observed: { cname: [], a: [], aaaa: [] },
        checked_at: null,
      },
      metadata: {},
      verified_at: null,
      last_checked_at: null,
      next_check_at: expect.stringMatching(TIMESTAMP),
      observation: { code: 'not_checked', message: expect.stringContaining(`_dss-challenge.${name}`), values: [] },
      claimed_elsewhere_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    });
    expect(Number.isInteger(domain?.id) && (domain?.id ?? 0) > 0).toBe(true);
    expect(domain?.updated_at).toBe(domain?.created_at);
    expect(response.headers.get('location')).toBe(`/api/v1/domains/${domain?.id}`);
  });

  it('points Location at the stored domain', async () => {
    const { data, response } = await store(alice, 'json', { name: uniqueName('located') });
    const location = response.headers.get('location') ?? '';
    const shown = await server.fetch(location, { headers: { Authorization: `Bearer ${alice.key}` } });
    expect(shown.status).toBe(200);
    expect(await shown.json()).toEqual({ data: data?.data });
  });

  it('stores the same record from a form body and from a JSON body', async () => {
    const fields = { index_page: 'https://a.example/index.html', not_found_page: 'https://a.example/missing.html' };
    const stored = await Promise.all(
      ENCODINGS.map(async (encoding) => {
        const { data } = await store(alice, encoding, { name: `${encoding}.Same-Result.example.`, ...fields });
        const row = await rowOf(server, data?.data.id ?? 0);
        return { reply: data?.data, row };
      }),
    );
    const [form, json] = stored;
    expect(form?.reply).toMatchObject({ name: 'form.same-result.example', ...fields });
    expect(json?.reply).toMatchObject({ name: 'json.same-result.example', ...fields });
    expect(form?.row).toMatchObject({ name: 'form.same-result.example', ...fields });
    expect(json?.row).toMatchObject({ name: 'json.same-result.example', ...fields });
  });

  it('sets pages left out of the body to null', async () => {
    const { data, response } = await store(alice, 'form', { name: uniqueName('bare') });
    expect(response.status).toBe(201);
    expect(data?.data).toMatchObject({ index_page: null, not_found_page: null });
  });
});

describe('domains_store refusals', () => {
  it.each(ENCODINGS)('names every unknown field of a %s body', async (encoding) => {
    const { error, response } = await store(alice, encoding, { name: uniqueName(), colour: 'red', owner: 'bob' });
    expect(response.status).toBe(422);
    expect(error?.type).toBe('/problems/validation');
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:owner']);
  });

  it.each([
    ['form with index_page only', 'form', { index_page: 'https://x.example/' }],
    ['JSON with index_page only', 'json', { index_page: 'https://x.example/' }],
    ['empty form', 'form', {}],
    ['empty JSON object', 'json', {}],
  ] as const)('requires name (%s)', async (_case, encoding, body) => {
    const { error, response } = await store(alice, encoding, body);
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:name']);
  });

  // `_dss-challenge.<name>` must be a DNS name (253 characters at most), or no lookup of it can be sent.
  const longName = (length: number) =>
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(length - 196)}.com`;
  it.each(ENCODINGS)(
    'refuses a name whose verification record cannot be a DNS name (%s), naming name',
    async (encoding) => {
      const name = longName(239);
      expect(name).toHaveLength(239);
      const { error, response } = await store(alice, encoding, { name });
      expect(response.status).toBe(422);
      expect(error?.type).toBe('/problems/validation');
      expect(fieldsOf(error)).toEqual(['body:name']);
      expect(error?.errors?.[0]?.message).toMatch(/at most 238 characters/);
      expect(await countRows(server, name)).toBe(0);
    },
  );

  it('stores a name of 238 characters, whose verification record has 253', async () => {
    const { data, response } = await store(alice, 'json', { name: longName(238) });
    expect(response.status).toBe(201);
    expect(data?.data.verification.name).toHaveLength(253);
  });

  it('answers a store with no body at all with 422 naming name', async () => {
    const { error, response } = await alice.json.POST('/domains', {} as never);
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:name']);
  });

  it.each(ENCODINGS)('gives one errors entry per bad field of a %s body', async (encoding) => {
    const { error, response } = await store(alice, encoding, {
      name: 'not a host',
      // Breaks both the URL rule and the length limit: still one entry.
      index_page: `ftp://example.com/${'a'.repeat(2048)}`,
      not_found_page: 'javascript:alert(1)',
      colour: 'red',
    });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:index_page', 'body:name', 'body:not_found_page']);
    for (const entry of error?.errors ?? []) expect(entry.message).not.toBe('');
  });

  it('refuses a form field sent twice', async () => {
    const body = new URLSearchParams([
      ['name', uniqueName('twice')],
      ['index_page', 'https://a.example/'],
      ['index_page', 'https://b.example/'],
    ]);
    const response = await server.fetch('/api/v1/domains', {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice.key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: body.toString(),
    });
    expect(response.status).toBe(422);
    const problem = await response.json();
    expect(fieldsOf(problem)).toEqual(['body:index_page']);
  });

  it.each([
    ['bad name', { name: 'localhost' }],
    ['bad page', { name: 'left-behind.example.com', index_page: '/relative' }],
    ['unknown field', { name: 'left-behind.example.com', colour: 'red' }],
  ])('leaves nothing behind when refused (%s)', async (_case, body) => {
    const listed = async () => (await alice.client.GET('/domains')).data?.meta.total;
    const [totalBefore, rowsBefore] = [await listed(), await countRows(server)];
    const { response } = await store(alice, 'json', body);
    expect(response.status).toBe(422);
    expect(await listed()).toBe(totalBefore);
    expect(await countRows(server)).toBe(rowsBefore);
    expect(await countRows(server, 'left-behind.example.com')).toBe(0);
  });
});
