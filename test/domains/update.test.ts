// PUT and PATCH /domains/{id}: both methods, both encodings; only sent fields change, name never does.
import { describe, expect, it } from 'vitest';
import { ENCODINGS } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import { backdate, METHODS, PAST, rowOf, storeOk, TIMESTAMP, update } from './fixtures.js';

const { server, account: alice } = await serverForFile();

const PAGES = {
  index_page: 'https://shop.example.com/index.html',
  not_found_page: 'https://shop.example.com/404.html',
};

describe.each(METHODS)('domains %s', (method) => {
  it.each(ENCODINGS)('changes the fields of a %s body and answers 200 with the record', async (encoding) => {
    const stored = await storeOk(alice, PAGES);
    const changes = { index_page: 'https://new.example.com/home', not_found_page: 'http://new.example.com/gone' };
    const { data, response } = await update(alice, encoding, method, stored.id, changes);
    expect(response.status).toBe(200);
    expect(data?.data).toEqual({ ...stored, ...changes, updated_at: expect.stringMatching(TIMESTAMP) });
    const shown = await alice.client.GET('/domains/{id}', { params: { path: { id: stored.id } } });
    expect(shown.data).toEqual(data);
  });

  it.each([
    ['index_page', { index_page: 'https://new.example.com/home' }],
    ['not_found_page', { not_found_page: 'https://new.example.com/gone' }],
  ])('changes only %s when only it is sent', async (_field, changes) => {
    for (const encoding of ENCODINGS) {
      const stored = await storeOk(alice, PAGES);
      const { data } = await update(alice, encoding, method, stored.id, changes);
      expect(data?.data).toMatchObject({ ...PAGES, ...changes, name: stored.name, id: stored.id });
      expect(await rowOf(server, stored.id)).toMatchObject({ ...PAGES, ...changes, name: stored.name });
    }
  });

  it('moves updated_at and keeps created_at', async () => {
    const stored = await storeOk(alice, PAGES);
    await backdate(server, stored.id);
    const { data } = await update(alice, 'form', method, stored.id, { index_page: 'https://new.example.com/' });
    expect(data?.data.created_at).toBe(PAST);
    expect(data?.data.updated_at).toMatch(TIMESTAMP);
    expect(Date.parse(data?.data.updated_at ?? '')).toBeGreaterThan(Date.parse(PAST));
  });

  it.each([
    ['an empty form', 'form', {}],
    ['an empty JSON object', 'json', {}],
    ['no body from the form client', 'form', undefined],
    ['no body from the JSON client', 'json', undefined],
  ] as const)('returns the record unchanged, updated_at too, for %s', async (_case, encoding, body) => {
    const stored = await storeOk(alice, PAGES);
    await backdate(server, stored.id);
    const before = { ...stored, created_at: PAST, updated_at: PAST };
    const { data, response } = await update(alice, encoding, method, stored.id, body);
    expect(response.status).toBe(200);
    expect(data?.data).toEqual(before);
    expect(await rowOf(server, stored.id)).toMatchObject({ ...PAGES, created_at: PAST, updated_at: PAST });
  });

  it('returns the record unchanged for a bodiless request without Content-Type', async () => {
    const stored = await storeOk(alice, PAGES);
    await backdate(server, stored.id);
    const response = await server.fetch(`/api/v1/domains/${stored.id}`, {
      method,
      headers: { Authorization: `Bearer ${alice.key}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { ...stored, created_at: PAST, updated_at: PAST } });
  });

  it.each(ENCODINGS)('rejects name in a %s body, naming it, and changes nothing', async (encoding) => {
    const stored = await storeOk(alice, PAGES);
    const rowBefore = await rowOf(server, stored.id);
    for (const body of [
      { name: 'renamed.example.com' },
      { name: stored.name },
      { name: 'renamed.example.com', index_page: 'https://renamed.example.com/' },
    ]) {
      const { error, response } = await update(alice, encoding, method, stored.id, body);
      expect(response.status).toBe(422);
      expect(error?.type).toBe('/problems/validation');
      expect(fieldsOf(error)).toEqual(['body:name']);
      expect(error?.errors?.[0]?.message).toMatch(/cannot be changed/);
      expect(await rowOf(server, stored.id)).toEqual(rowBefore);
    }
  });

  it.each(ENCODINGS)('names every unknown field of a %s body and changes nothing', async (encoding) => {
    const stored = await storeOk(alice, PAGES);
    const rowBefore = await rowOf(server, stored.id);
    const { error, response } = await update(alice, encoding, method, stored.id, {
      index_page: 'https://changed.example.com/',
      colour: 'red',
      owner: 'bob',
    });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:owner']);
    expect(await rowOf(server, stored.id)).toEqual(rowBefore);
  });

  it.each(ENCODINGS)('gives one errors entry per bad field of a %s body', async (encoding) => {
    const stored = await storeOk(alice, PAGES);
    const { error, response } = await update(alice, encoding, method, stored.id, {
      name: 'renamed.example.com',
      index_page: 'ftp://example.com/file',
      not_found_page: `https://example.com/${'a'.repeat(2100)}`,
      colour: 'red',
    });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:index_page', 'body:name', 'body:not_found_page']);
  });

  it.each(ENCODINGS)('answers 404 problem for an unknown id with a %s body', async (encoding) => {
    const { error, response } = await update(alice, encoding, method, 999_999, { index_page: 'https://x.example/' });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: '/problems/not-found', status: 404 });
    expect(await rowOf(server, 999_999)).toBeUndefined();
  });
});

describe('domains PUT and PATCH', () => {
  it.each([
    ['one page', { index_page: 'https://same.example.com/' }],
    ['both pages', { index_page: 'https://same.example.com/', not_found_page: 'https://same.example.com/404' }],
    ['a cleared page', { not_found_page: '' }],
    ['no fields', {}],
  ])('leave the same record for %s', async (_case, changes) => {
    const results = [];
    for (const method of METHODS) {
      const stored = await storeOk(alice, PAGES);
      const { data, response } = await update(alice, 'form', method, stored.id, changes);
      const { index_page, not_found_page, status } = data?.data ?? stored;
      results.push({ status: response.status, fields: { index_page, not_found_page, status } });
    }
    expect(results[0]).toEqual(results[1]);
    expect(results[0]?.status).toBe(200);
  });
});
