// The page URL rule of index_page and not_found_page, on store and on update: absolute http(s) URLs of at most
// 2048 characters are kept as sent; an empty string (or JSON null) means no page; anything else is a 422.
import { beforeAll, describe, expect, it } from 'vitest';
import { ENCODINGS } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import { type Domain, METHODS, rowOf, store, storeOk, uniqueName, update } from './fixtures.js';

const { server, account: alice } = await serverForFile();

const FIELDS = ['index_page', 'not_found_page'] as const;
const ORIGIN = 'https://example.com/';
const urlOfLength = (length: number) => ORIGIN + 'a'.repeat(length - ORIGIN.length);

const accepted: Array<[string, string]> = [
  ['https', 'https://shop.example.com/welcome.html'],
  ['http', 'http://shop.example.com/'],
  ['a port, query and fragment', 'https://shop.example.com:8443/a/b?x=1&y=%20#top'],
  ['an upper-case scheme', 'HTTPS://shop.example.com/'],
  ['a Unicode host and path', 'https://bücher.example/straße'],
  ['exactly 2048 characters', urlOfLength(2048)],
];

const rejected: Array<[string, string]> = [
  ['an ftp URL', 'ftp://shop.example.com/file'],
  ['a relative path', '/x'],
  ['a relative name', 'welcome.html'],
  ['plain text', 'not a url'],
  ['a javascript: URL', 'javascript:alert(1)'],
  ['a data: URL', 'data:text/html,<b>hi</b>'],
  ['a mailto: URL', 'mailto:admin@example.com'],
  ['a scheme without a host', 'https://'],
  ['a scheme-relative URL', '//shop.example.com/'],
  ['a space inside', 'https://shop.example.com/a page'],
  ['a line break inside', 'https://shop.example.com/\nx'],
  ['2049 characters', urlOfLength(2049)],
];

describe.each(FIELDS)('%s on store', (field) => {
  describe.each(ENCODINGS)('from a %s body', (encoding) => {
    it.each(accepted)('keeps %s as sent', async (_case, url) => {
      const { data, response } = await store(alice, encoding, { name: uniqueName(), [field]: url });
      expect(response.status).toBe(201);
      expect(data?.data[field]).toBe(url);
      expect((await rowOf(server, data?.data.id ?? 0))?.[field]).toBe(url);
    });

    it.each(rejected)('refuses %s with 422 naming the field', async (_case, url) => {
      const name = uniqueName();
      const { error, response } = await store(alice, encoding, { name, [field]: url });
      expect(response.status).toBe(422);
      expect(fieldsOf(error)).toEqual([`body:${field}`]);
      const stored = await server.db.selectFrom('domains').select('id').where('name', '=', name).executeTakeFirst();
      expect(stored).toBeUndefined();
    });

    it('stores an empty string as null', async () => {
      const { data, response } = await store(alice, encoding, { name: uniqueName(), [field]: '' });
      expect(response.status).toBe(201);
      expect(data?.data[field]).toBeNull();
      expect((await rowOf(server, data?.data.id ?? 0))?.[field]).toBeNull();
    });
  });

  it('stores JSON null as null', async () => {
    const { data, response } = await store(alice, 'json', { name: uniqueName(), [field]: null });
    expect(response.status).toBe(201);
    expect(data?.data[field]).toBeNull();
  });

  it.each([
    ['a number', 42],
    ['an array', ['https://shop.example.com/']],
    ['an object', { url: 'https://shop.example.com/' }],
  ])('refuses %s in JSON with 422 naming the field', async (_case, value) => {
    const { error, response } = await store(alice, 'json', { name: uniqueName(), [field]: value });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual([`body:${field}`]);
  });
});

const PAGES = {
  index_page: 'https://shop.example.com/index.html',
  not_found_page: 'https://shop.example.com/404.html',
};
const other = (field: (typeof FIELDS)[number]) => (field === 'index_page' ? 'not_found_page' : 'index_page');

describe.each(METHODS)('page URLs on %s', (method) => {
  describe.each(FIELDS)('%s', (field) => {
    it.each([
      ['an empty form value', 'form', ''],
      ['an empty JSON string', 'json', ''],
      ['JSON null', 'json', null],
    ] as const)('is cleared to null by %s, keeping the other page', async (_case, encoding, value) => {
      const stored = await storeOk(alice, PAGES);
      const { data, response } = await update(alice, encoding, method, stored.id, { [field]: value });
      expect(response.status).toBe(200);
      expect(data?.data[field]).toBeNull();
      expect(data?.data[other(field)]).toBe(PAGES[other(field)]);
      expect(await rowOf(server, stored.id)).toMatchObject({ [field]: null, [other(field)]: PAGES[other(field)] });
    });

    it.each(ENCODINGS)('is set again after being cleared, from a %s body', async (encoding) => {
      const stored = await storeOk(alice);
      const { data } = await update(alice, encoding, method, stored.id, { [field]: urlOfLength(2048) });
      expect(data?.data[field]).toBe(urlOfLength(2048));
    });

    // A refused update changes nothing, so one domain serves every refusal of this field (each checks it whole).
    let kept: Domain;
    beforeAll(async () => {
      kept = await storeOk(alice, PAGES);
    });

    it.each(rejected)('refuses %s with 422 naming the field, changing nothing', async (_case, url) => {
      const stored = kept;
      const before = await rowOf(server, stored.id);
      for (const encoding of ENCODINGS) {
        const { error, response } = await update(alice, encoding, method, stored.id, { [field]: url });
        expect(response.status).toBe(422);
        expect(fieldsOf(error)).toEqual([`body:${field}`]);
      }
      expect(await rowOf(server, stored.id)).toEqual(before);
    });
  });

  it('clears both pages in one request', async () => {
    const stored = await storeOk(alice, PAGES);
    const { data } = await update(alice, 'form', method, stored.id, { index_page: '', not_found_page: '' });
    expect(data?.data).toMatchObject({ index_page: null, not_found_page: null });
  });
});
