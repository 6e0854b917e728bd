// DELETE /spaces/{id}: deleting a space for good.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';

const { account: alice } = await serverForFile();

async function storedSpaceId(name: string): Promise<number> {
  const { data } = await alice.client.POST('/spaces', { body: { name } });
  if (!data) throw new Error('could not store a space');
  return data.data.id;
}

describe('spaces_delete', () => {
  it('answers 204 with an empty body, after which the space is 404', async () => {
    const id = await storedSpaceId('Doomed');
    const { response } = await alice.client.DELETE('/spaces/{id}', { params: { path: { id } } });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const shown = await alice.client.GET('/spaces/{id}', { params: { path: { id } } });
    expect(shown.response.status).toBe(404);
  });

  it('answers 404 to a second delete of the same id', async () => {
    const id = await storedSpaceId('Twice');
    await alice.client.DELETE('/spaces/{id}', { params: { path: { id } } });
    const { error, response } = await alice.client.DELETE('/spaces/{id}', { params: { path: { id } } });
    expect(response.status).toBe(404);
    expect(error?.status).toBe(404);
  });

  it('answers 404 to an update of a deleted space', async () => {
    const id = await storedSpaceId('Gone');
    await alice.client.DELETE('/spaces/{id}', { params: { path: { id } } });
    const { response } = await alice.client.PATCH('/spaces/{id}', { params: { path: { id } }, body: { color: 2 } });
    expect(response.status).toBe(404);
  });

  it('removes only the space it names, from show and from the list', async () => {
    const kept = await storedSpaceId('Kept');
    const deleted = await storedSpaceId('Deleted');
    await alice.client.DELETE('/spaces/{id}', { params: { path: { id: deleted } } });
    const shown = await alice.client.GET('/spaces/{id}', { params: { path: { id: kept } } });
    expect(shown.data?.data.name).toBe('Kept');
    const { data } = await alice.client.GET('/spaces', { params: { query: { per_page: 100 } } });
    const ids = data?.data.map((space) => space.id);
    expect(ids).toContain(kept);
    expect(ids).not.toContain(deleted);
  });

  it('answers 404 for an id that never existed', async () => {
    const { response } = await alice.client.DELETE('/spaces/{id}', { params: { path: { id: 999_999 } } });
    expect(response.status).toBe(404);
  });
});
