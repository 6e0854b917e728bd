// GET /spaces/{id}: showing one space of the account.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';

const { account: alice } = await serverForFile();

describe('spaces_show', () => {
  it('answers 200 with the space exactly as stored', async () => {
    const stored = await alice.client.POST('/spaces', { body: { name: '  Ärger im Büro 🚀 ', color: 4 } });
    const id = stored.data?.data.id ?? 0;
    const { data, response } = await alice.client.GET('/spaces/{id}', { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ data: stored.data?.data });
    expect(data?.data).toMatchObject({ id, name: 'Ärger im Büro 🚀', color: 4 });
  });

  it('shows each space by its own id', async () => {
    const first = await alice.client.POST('/spaces', { body: { name: 'First', color: 1 } });
    const second = await alice.client.POST('/spaces', { body: { name: 'Second', color: 2 } });
    for (const stored of [first, second]) {
      const id = stored.data?.data.id ?? 0;
      const { data } = await alice.client.GET('/spaces/{id}', { params: { path: { id } } });
      expect(data?.data).toEqual(stored.data?.data);
    }
  });

  it('answers 404 for an id that does not exist', async () => {
    const { error, response } = await alice.client.GET('/spaces/{id}', { params: { path: { id: 999_999 } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ status: 404, type: '/problems/not-found' });
  });
});
