// GET /domains/{id}: one domain of the account, and 404 for an id it does not hold.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';
import { storeOk } from './fixtures.js';

const { account: alice } = await serverForFile();

describe('domains_show', () => {
  it('answers 200 with the domain as stored', async () => {
    const stored = await storeOk(alice, { index_page: 'https://shop.example.com/', not_found_page: '' });
    const { data, response } = await alice.client.GET('/domains/{id}', { params: { path: { id: stored.id } } });
    expect(response.status).toBe(200);
    expect(data).toEqual({ data: stored });
  });

  it('shows each domain by its own id', async () => {
    const [first, second] = [await storeOk(alice), await storeOk(alice)];
    for (const domain of [first, second]) {
      const { data } = await alice.json.GET('/domains/{id}', { params: { path: { id: domain.id } } });
      expect(data?.data).toEqual(domain);
    }
  });

  it.each([999_999, 9_007_199_254_740_991])('answers 404 problem for unknown id %s', async (id) => {
    const { error, response } = await alice.client.GET('/domains/{id}', { params: { path: { id } } });
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: '/problems/not-found', status: 404 });
  });
});
