// POST /domains: creating a domain.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
let alice: TestAccount;

beforeAll(async () => {
  server = await startServer();
  alice = await server.account('alice');
});
afterAll(() => server.close());

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
});
