// Accounts are isolated: one account cannot see, change or delete another's domains and spaces, and cannot
// tell another account's record from one that does not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESOURCE_NAMES, type ResourceName } from '../../server/resources.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { asForm, operations, pathOf, resourceModule, type SpecOperation } from '../support/spec-operations.js';
import { createRecord } from './fixtures.js';

let server: TestServer;
let alice: TestAccount;
let bob: TestAccount;
/** Alice's records by resource; bob gets two of each, so his counts differ from hers. */
const aliceIds = Object.fromEntries(RESOURCE_NAMES.map((name) => [name, [] as number[]])) as Record<
  ResourceName,
  number[]
>;
const bobIds = Object.fromEntries(RESOURCE_NAMES.map((name) => [name, [] as number[]])) as Record<
  ResourceName,
  number[]
>;
const NONEXISTENT_ID = 987_654_321;

beforeAll(async () => {
  server = await startServer();
  alice = await server.account('alice');
  bob = await server.account('bob');
  for (const resource of RESOURCE_NAMES) {
    aliceIds[resource].push(await createRecord(alice, resource, 'alice'));
    bobIds[resource].push(await createRecord(bob, resource, 'bob'), await createRecord(bob, resource, 'bob'));
  }
});
afterAll(() => server.close());

function request(account: TestAccount, operation: SpecOperation, id: number): Promise<Response> {
  const takesBody = operation.takesBody;
  return server.fetch(pathOf(operation, id), {
    method: operation.method,
    headers: {
      Authorization: `Bearer ${account.key}`,
      ...(takesBody ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(takesBody ? { body: asForm(resourceModule(operation.resource).examples.update('hijacked')) } : {}),
  });
}

async function readAsAlice(resource: ResourceName, id: number): Promise<unknown> {
  const response = await server.fetch(`/api/v1/${resource}/${id}`, {
    headers: { Authorization: `Bearer ${alice.key}` },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: unknown }).data;
}

describe('operations on one record', () => {
  const cases = operations
    .filter((op) => op.onRecord)
    .map((operation) => ({ operation, operationId: operation.operationId }));

  it('cover show, update, patch and delete of every resource, and the actions on a record', () => {
    expect(cases.map((c) => c.operationId).sort()).toEqual(
      [
        ...RESOURCE_NAMES.flatMap((r) => ['delete', 'patch', 'show', 'update'].map((v) => `${r}_${v}`)),
        'domains_verify',
      ].sort(),
    );
  });

  it.each(cases)("$operationId of another account's record answers 404 like a missing one", async ({ operation }) => {
    const id = aliceIds[operation.resource][0] as number;
    const before = await readAsAlice(operation.resource, id);

    const foreign = await request(bob, operation, id);
    const missing = await request(bob, operation, NONEXISTENT_ID);

    expect(foreign.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(foreign.headers.get('content-type')).toBe(missing.headers.get('content-type'));
    const [foreignBody, missingBody] = (await Promise.all([foreign.json(), missing.json()])) as Array<
      Record<string, unknown>
    >;
    const shape = (body: Record<string, unknown> | undefined) => ({
      type: body?.type,
      title: body?.title,
      status: body?.status,
    });
    expect(shape(foreignBody)).toEqual(shape(missingBody));
    expect(Object.keys(foreignBody ?? {}).sort()).toEqual(Object.keys(missingBody ?? {}).sort());
    // The detail names the id the client sent, and nothing about whose record it is.
    expect(foreignBody?.detail).toBe(String(missingBody?.detail).replace(String(NONEXISTENT_ID), String(id)));

    expect(await readAsAlice(operation.resource, id)).toEqual(before);
  });
});

describe.each(RESOURCE_NAMES)('%s_list', (resource) => {
  type Page = { data: Array<{ id: number; name: string }>; meta: { total: number } };
  const list = async (account: TestAccount, query = '') => {
    const response = await server.fetch(`/api/v1/${resource}${query}`, {
      headers: { Authorization: `Bearer ${account.key}` },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Page;
  };

  it("shows only the account's own records and counts only them", async () => {
    const bobs = await list(bob);
    expect(bobs.data.map((record) => record.id).sort()).toEqual([...bobIds[resource]].sort());
    expect(bobs.meta.total).toBe(bobIds[resource].length);

    const alices = await list(alice);
    expect(alices.data.map((record) => record.id)).toEqual(aliceIds[resource]);
    expect(alices.meta.total).toBe(aliceIds[resource].length);
  });

  it('finds nothing of another account when searching for its name', async () => {
    const result = await list(bob, '?search=alice');
    expect(result.data).toEqual([]);
    expect(result.meta.total).toBe(0);
  });

  it.each(['%', '_', '\\', '%alice%'])(
    'finds nothing of any account through the wildcard-like search %s',
    async (search) => {
      const result = await list(bob, `?search=${encodeURIComponent(search)}`);
      expect(result.data).toEqual([]);
      expect(result.meta.total).toBe(0);
    },
  );

  it('counts only own records when a search matches records of both accounts', async () => {
    // Every seeded name contains "e" ("alice", "bob...example" or "space").
    const result = await list(bob, '?search=e&per_page=100');
    expect(result.data.map((record) => record.id).sort()).toEqual([...bobIds[resource]].sort());
    expect(result.meta.total).toBe(bobIds[resource].length);
  });

  it('sorts and pages over own records only', async () => {
    // "alice…" sorts before "bob…": a leak would show up first.
    const first = await list(bob, '?sort_by=name&sort=asc&per_page=10');
    expect(first.data.map((record) => record.id).sort()).toEqual([...bobIds[resource]].sort());
    expect(first.data[0]?.name).toMatch(/^bob/);
    const second = await list(bob, '?sort_by=name&sort=asc&per_page=10&page=2');
    expect(second.data).toEqual([]);
    expect(second.meta.total).toBe(bobIds[resource].length);
  });
});

describe('domains_store', () => {
  it("keeps a new record out of the other account's list", async () => {
    const created = await bob.client.POST('/domains', { body: { name: 'bob-private.example.com' } });
    expect(created.response.status).toBe(201);
    bobIds.domains.push(created.data?.data.id as number);

    const alices = await alice.client.GET('/domains', { params: { query: { search: 'bob-private' } } });
    expect(alices.data?.data).toEqual([]);
    expect(alices.data?.meta.total).toBe(0);
  });

  it("answers 409 to a name another account holds active, leaving that account's domain as it was", async () => {
    const id = aliceIds.domains[0] as number;
    // Held active below the API: the DNS proof itself is tested against a real DNS server (test/dns).
    await server.db.updateTable('domains').set({ status: 'active' }).where('id', '=', id).execute();
    const before = (await readAsAlice('domains', id)) as { name: string };
    const duplicate = await bob.client.POST('/domains', { body: { name: before.name } });
    expect(duplicate.response.status).toBe(409);
    expect(duplicate.error).toMatchObject({ type: '/problems/domain-held-elsewhere' });
    expect(await readAsAlice('domains', id)).toEqual(before);
    const bobs = await bob.client.GET('/domains', { params: { query: { search: before.name } } });
    expect(bobs.data?.meta.total).toBe(0);
  });
});

describe('spaces_store', () => {
  it("keeps a new record out of the other account's list", async () => {
    const created = await bob.client.POST('/spaces', { body: { name: 'Bob private space', color: 4 } });
    expect(created.response.status).toBe(201);
    bobIds.spaces.push(created.data?.data.id as number);

    const alices = await alice.client.GET('/spaces', { params: { query: { search: 'Bob private' } } });
    expect(alices.data?.data).toEqual([]);
    expect(alices.data?.meta.total).toBe(0);
  });
});
