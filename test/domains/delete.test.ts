// DELETE /domains/{id}: 204 with no body, the domain gone for good, and 404 for an id the account does not hold.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';
import { countRows, rowOf, store, storeOk } from './fixtures.js';

const { server, account: alice } = await serverForFile();

const deleteDomain = (id: number) => alice.client.DELETE('/domains/{id}', { params: { path: { id } } });

describe('domains_delete', () => {
  it('answers 204 with an empty body', async () => {
    const stored = await storeOk(alice);
    const { response } = await deleteDomain(stored.id);
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
  });

  it('removes the domain: show, update and a second delete then answer 404', async () => {
    const stored = await storeOk(alice);
    await deleteDomain(stored.id);
    const path = { params: { path: { id: stored.id } } };

    const shown = await alice.client.GET('/domains/{id}', path);
    const put = await alice.client.PUT('/domains/{id}', { ...path, body: { index_page: 'https://x.example/' } });
    const patch = await alice.json.PATCH('/domains/{id}', { ...path, body: {} });
    const again = await deleteDomain(stored.id);
    expect([shown, put, patch, again].map(({ response }) => response.status)).toEqual([404, 404, 404, 404]);
    expect(shown.error?.type).toBe('/problems/not-found');
    expect(await rowOf(server, stored.id)).toBeUndefined();
  });

  it('removes only the domain named by the id', async () => {
    const [kept, removed] = [await storeOk(alice), await storeOk(alice)];
    const before = await countRows(server);
    await deleteDomain(removed.id);
    expect(await countRows(server)).toBe(before - 1);
    const { data } = await alice.client.GET('/domains/{id}', { params: { path: { id: kept.id } } });
    expect(data?.data).toEqual(kept);
  });

  it('frees the name for a new store', async () => {
    const stored = await storeOk(alice);
    await deleteDomain(stored.id);
    const { data, response } = await store(alice, 'json', { name: stored.name });
    expect(response.status).toBe(201);
    expect(data?.data.name).toBe(stored.name);
    expect(data?.data.id).not.toBe(stored.id);
  });

  it('answers 404 problem for an unknown id and deletes nothing', async () => {
    await storeOk(alice);
    const before = await countRows(server);
    const { error, response } = await deleteDomain(999_999);
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: '/problems/not-found', status: 404 });
    expect(await countRows(server)).toBe(before);
  });
});
