// Every resource helper of the client against the real server, with form bodies (the default) and JSON bodies.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, type DomainSpaceClient } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';
import { type RecordingFetch, recordingFetch } from './recording-fetch.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const encodings = [
  { bodyEncoding: 'form', contentType: 'application/x-www-form-urlencoded' },
  { bodyEncoding: 'json', contentType: 'application/json' },
] as const;

let names = 0;
const uniqueName = (prefix: string) => `${prefix}-${++names}.example.com`;

describe.each(encodings)('with $bodyEncoding bodies', ({ bodyEncoding, contentType }) => {
  let api: DomainSpaceClient;
  let sent: RecordingFetch;

  beforeAll(async () => {
    const { key } = await server.account();
    sent = recordingFetch();
    api = createClient({ baseUrl: server.apiUrl, apiKey: key, bodyEncoding, fetch: sent.fetch });
  });

  const lastBody = () => {
    const request = sent.requests.at(-1);
    expect(request?.headers.get('Content-Type')).toBe(contentType);
    const body = request?.body ?? '';
    return bodyEncoding === 'form' ? Object.fromEntries(new URLSearchParams(body)) : JSON.parse(body);
  };

  describe('domains', () => {
    test('create answers the stored domain and sends the fields in the chosen encoding', async () => {
      const name = uniqueName(`create-${bodyEncoding}`);
      const domain = await api.domains.create({ name, index_page: 'https://shop.example/' });
      expect(domain).toMatchObject({ name, index_page: 'https://shop.example/', not_found_page: null });
      expect(domain.id).toBeGreaterThan(0);
      expect(lastBody()).toEqual({ name, index_page: 'https://shop.example/' });
      expect(sent.requests.at(-1)?.method).toBe('POST');
    });

    test('get answers the domain', async () => {
      const created = await api.domains.create({ name: uniqueName('get') });
      await expect(api.domains.get(created.id)).resolves.toEqual(created);
    });

    test('list answers one page with data, links and meta, passing the parameters through', async () => {
      const created = await api.domains.create({ name: uniqueName(`listed-${bodyEncoding}`) });
      const page = await api.domains.list({
        search: `listed-${bodyEncoding}`,
        sort_by: 'name',
        sort: 'asc',
        per_page: 25,
      });
      expect(page.data).toEqual([created]);
      expect(page.meta).toMatchObject({ current_page: 1, last_page: 1, per_page: 25, total: 1 });
      expect(page.links.next).toBeNull();
      expect(Object.fromEntries(sent.requests.at(-1)?.url.searchParams ?? [])).toEqual({
        search: `listed-${bodyEncoding}`,
        sort_by: 'name',
        sort: 'asc',
        per_page: '25',
      });
    });

    test('update (PATCH) changes the fields sent, and null clears a page', async () => {
      const created = await api.domains.create({
        name: uniqueName('update'),
        index_page: 'https://a.example/',
        not_found_page: 'https://a.example/404',
      });
      const changed = await api.domains.update(created.id, { not_found_page: null });
      expect(sent.requests.at(-1)?.method).toBe('PATCH');
      // A form has no null: the empty value is what clears the page.
      expect(lastBody()).toEqual({ not_found_page: bodyEncoding === 'form' ? '' : null });
      expect(changed).toMatchObject({ id: created.id, index_page: 'https://a.example/', not_found_page: null });
      await expect(api.domains.get(created.id)).resolves.toMatchObject({ not_found_page: null });
    });

    test('replace (PUT) sets the pages sent, leaving out undefined fields', async () => {
      const created = await api.domains.create({ name: uniqueName('replace'), index_page: 'https://b.example/' });
      const replaced = await api.domains.replace(created.id, {
        index_page: null,
        not_found_page: 'https://b.example/missing',
      });
      expect(sent.requests.at(-1)?.method).toBe('PUT');
      expect(replaced).toMatchObject({ index_page: null, not_found_page: 'https://b.example/missing' });
      await api.domains.replace(created.id, { index_page: 'https://b.example/home', not_found_page: undefined });
      expect(Object.keys(lastBody())).toEqual(['index_page']);
    });

    test('delete resolves to nothing and the domain is gone', async () => {
      const created = await api.domains.create({ name: uniqueName('delete') });
      await expect(api.domains.delete(created.id)).resolves.toBeUndefined();
      expect(sent.requests.at(-1)?.method).toBe('DELETE');
      await expect(api.domains.get(created.id)).rejects.toMatchObject({ name: 'ApiError', status: 404 });
    });
  });

  describe('spaces', () => {
    test('create answers the stored space, color 1 by default', async () => {
      const space = await api.spaces.create({ name: `Default ${bodyEncoding}` });
      expect(space).toMatchObject({ name: `Default ${bodyEncoding}`, color: 1 });
      expect(lastBody()).toEqual({ name: `Default ${bodyEncoding}` });
    });

    test('create sends the color as a number the API accepts in either encoding', async () => {
      const space = await api.spaces.create({ name: 'Marketing', color: 3 });
      expect(space).toMatchObject({ name: 'Marketing', color: 3 });
      expect(lastBody()).toEqual({ name: 'Marketing', color: bodyEncoding === 'form' ? '3' : 3 });
    });

    test('get answers the space', async () => {
      const created = await api.spaces.create({ name: 'Shown', color: 2 });
      await expect(api.spaces.get(created.id)).resolves.toEqual(created);
    });

    test('list answers one page, passing the parameters through', async () => {
      const created = await api.spaces.create({ name: `Listed space ${bodyEncoding}` });
      const page = await api.spaces.list({ search: `Listed space ${bodyEncoding}`, search_by: 'name' });
      expect(page.data).toEqual([created]);
      expect(page.meta).toMatchObject({ total: 1, per_page: 10 });
    });

    test('update (PATCH) changes only the fields sent', async () => {
      const created = await api.spaces.create({ name: 'Patched', color: 2 });
      const changed = await api.spaces.update(created.id, { color: 5 });
      expect(changed).toMatchObject({ id: created.id, name: 'Patched', color: 5 });
      expect(sent.requests.at(-1)?.method).toBe('PATCH');
    });

    test('replace (PUT) sets name and color', async () => {
      const created = await api.spaces.create({ name: 'Before', color: 2 });
      const replaced = await api.spaces.replace(created.id, { name: 'After', color: 6 });
      expect(replaced).toMatchObject({ id: created.id, name: 'After', color: 6 });
      expect(sent.requests.at(-1)?.method).toBe('PUT');
    });

    test('delete resolves to nothing and the space is gone', async () => {
      const created = await api.spaces.create({ name: 'Deleted' });
      await expect(api.spaces.delete(created.id)).resolves.toBeUndefined();
      await expect(api.spaces.get(created.id)).rejects.toMatchObject({ name: 'ApiError', status: 404 });
    });
  });
});

describe('raw client', () => {
  test('reaches every path with the same defaults, answering { data, error, response }', async () => {
    const { key } = await server.account();
    const api = createClient({ baseUrl: server.apiUrl, apiKey: key });
    const created = await api.domains.create({ name: uniqueName('raw') });
    const shown = await api.raw.GET('/domains/{id}', { params: { path: { id: created.id } } });
    expect(shown.data?.data).toEqual(created);
    const stored = await api.raw.POST('/spaces', { body: { name: 'Raw', color: 4 } });
    expect(stored.response.status).toBe(201);
    expect(stored.data?.data).toMatchObject({ name: 'Raw', color: 4 });
    const missing = await api.raw.GET('/spaces/{id}', { params: { path: { id: 999_999 } } });
    expect(missing.error).toMatchObject({ status: 404, title: 'Not Found' });
  });
});
