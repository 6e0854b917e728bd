// PUT and PATCH /spaces/{id}: the same partial update under both methods, from a form or JSON body.
import { describe, expect, it } from 'vitest';
import type { components } from '../../generated/api.js';
import { foldText } from '../../server/db/listing.js';
import { clientOf, ENCODINGS } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import type { ApiClient } from '../support/server.js';
import { ACCEPTED_NAMES, REJECTED_FORM_COLORS, REJECTED_JSON_COLORS, REJECTED_NAMES } from './fixtures.js';

type Space = components['schemas']['space'];
type SpaceUpdate = components['schemas']['space-update'];

const LONG_AGO = '2020-01-01T00:00:00.000Z';

const { server, account: alice } = await serverForFile();

const { id: aliceId } = await server.db
  .selectFrom('accounts')
  .select('id')
  .where('name', '=', alice.name)
  .executeTakeFirstOrThrow();

/**
 * A new space whose timestamps lie in the past, so that a change of updated_at shows without waiting: written
 * straight into the database (the create path is store.test.ts's), and read back through the API.
 */
async function storedSpace(name = 'Marketing', color = 2): Promise<Space> {
  const { id } = await server.db
    .insertInto('spaces')
    .values({
      account_id: aliceId,
      name,
      name_key: foldText(name),
      color,
      created_at: LONG_AGO,
      updated_at: LONG_AGO,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const space = await shown(id);
  if (!space) throw new Error('could not store a space');
  return space;
}

async function shown(id: number): Promise<Space | undefined> {
  return (await alice.client.GET('/spaces/{id}', { params: { path: { id } } })).data?.data;
}

const METHODS = ['PUT', 'PATCH'] as const;

function update(client: ApiClient, method: (typeof METHODS)[number], id: number, body: SpaceUpdate) {
  const init = { params: { path: { id } }, body };
  return method === 'PUT' ? client.PUT('/spaces/{id}', init) : client.PATCH('/spaces/{id}', init);
}

describe.each(METHODS)('spaces update by %s', (method) => {
  it.each(ENCODINGS)('changes name and color from a %s body and answers 200', async (encoding) => {
    const space = await storedSpace();
    const { data, response } = await update(clientOf(alice, encoding), method, space.id, { name: 'Sales', color: 6 });
    expect(response.status).toBe(200);
    expect(data?.data).toMatchObject({ id: space.id, name: 'Sales', color: 6, created_at: LONG_AGO });
    expect(data?.data.updated_at).not.toBe(LONG_AGO);
    expect(await shown(space.id)).toEqual(data?.data);
  });

  it.each([
    { sent: 'color', body: { color: 5 }, expected: { name: 'Marketing', color: 5 } },
    { sent: 'name', body: { name: 'Renamed' }, expected: { name: 'Renamed', color: 2 } },
  ])('changes only the $sent when only the $sent is sent', async ({ body, expected }) => {
    const space = await storedSpace('Marketing', 2);
    const { data, response } = await update(alice.client, method, space.id, body);
    expect(response.status).toBe(200);
    expect(data?.data).toMatchObject({ id: space.id, ...expected, created_at: LONG_AGO });
    expect(await shown(space.id)).toMatchObject(expected);
  });

  it.each(ENCODINGS)('returns the space unchanged, updated_at too, for a %s body with no fields', async (encoding) => {
    const space = await storedSpace();
    const { data, response } = await update(clientOf(alice, encoding), method, space.id, {});
    expect(response.status).toBe(200);
    expect(data?.data).toEqual(space);
    expect(await shown(space.id)).toEqual(space);
  });

  it('returns the space unchanged for a request with no body at all', async () => {
    const space = await storedSpace();
    const response = await server.fetch(`/api/v1/spaces/${space.id}`, {
      method,
      headers: { Authorization: `Bearer ${alice.key}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: space });
  });

  it('stores form color=3 as the integer 3', async () => {
    const space = await storedSpace();
    const response = await server.fetch(`/api/v1/spaces/${space.id}`, {
      method,
      headers: { Authorization: `Bearer ${alice.key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'color=3',
    });
    expect(response.status).toBe(200);
    const { data } = await response.json();
    expect(data.color).toBe(3);
    expect(typeof data.color).toBe('number');
  });

  it.each(ACCEPTED_NAMES.flatMap((c) => ENCODINGS.map((encoding) => ({ ...c, encoding }))))(
    'accepts a name that is $label and stores it trimmed ($encoding)',
    async ({ encoding, sent, stored }) => {
      const space = await storedSpace();
      const { data, response } = await update(clientOf(alice, encoding), method, space.id, { name: sent });
      expect(response.status).toBe(200);
      expect(data?.data.name).toBe(stored);
      expect((await shown(space.id))?.name).toBe(stored);
    },
  );

  it.each(REJECTED_NAMES.flatMap((c) => ENCODINGS.map((encoding) => ({ ...c, encoding }))))(
    'rejects a name that is $label with 422 naming name and keeps the space ($encoding)',
    async ({ encoding, sent }) => {
      const space = await storedSpace();
      const { error, response } = await update(clientOf(alice, encoding), method, space.id, { name: sent });
      expect(response.status).toBe(422);
      expect(fieldsOf(error)).toEqual(['body:name']);
      expect(await shown(space.id)).toEqual(space);
    },
  );

  it.each([1, 6].flatMap((color) => ENCODINGS.map((encoding) => ({ encoding, color }))))(
    'accepts color $color ($encoding)',
    async ({ encoding, color }) => {
      const space = await storedSpace('Edge', 3);
      const { data, response } = await update(clientOf(alice, encoding), method, space.id, { color });
      expect(response.status).toBe(200);
      expect(data?.data.color).toBe(color);
    },
  );

  it.each(REJECTED_FORM_COLORS)('rejects form color=%j with 422 naming color', async (color) => {
    const space = await storedSpace();
    const { error, response } = await update(alice.client, method, space.id, { color: color as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:color']);
    expect(await shown(space.id)).toEqual(space);
  });

  it.each(REJECTED_JSON_COLORS)('rejects JSON color %j with 422 naming color', async (color) => {
    const space = await storedSpace();
    const { error, response } = await update(alice.json, method, space.id, { color: color as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:color']);
    expect(await shown(space.id)).toEqual(space);
  });

  it.each(ENCODINGS)('rejects unknown fields with 422 naming each (%s)', async (encoding) => {
    const space = await storedSpace();
    const body = { name: 'Sales', colour: 2, owner: 'bob' } as SpaceUpdate;
    const { error, response } = await update(clientOf(alice, encoding), method, space.id, body);
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:owner']);
    expect(await shown(space.id)).toEqual(space);
  });

  it.each(ENCODINGS)('names every bad field once (%s)', async (encoding) => {
    const space = await storedSpace();
    const body = { name: '   ', color: 0, id: 5 } as SpaceUpdate;
    const { error, response } = await update(clientOf(alice, encoding), method, space.id, body);
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:color', 'body:id', 'body:name']);
  });

  it('answers 404 for an id that does not exist', async () => {
    const { error, response } = await update(alice.client, method, 999_999, { color: 2 });
    expect(response.status).toBe(404);
    expect(error?.status).toBe(404);
  });
});

describe('spaces update by PUT and PATCH', () => {
  it('gives the same answer to the same change', async () => {
    const first = await storedSpace('Twin', 1);
    const second = await storedSpace('Twin', 1);
    const put = await update(alice.client, 'PUT', first.id, { name: ' Twin 2 ', color: 4 });
    const patch = await update(alice.client, 'PATCH', second.id, { name: ' Twin 2 ', color: 4 });
    expect(put.response.status).toBe(patch.response.status);
    const { id: _put, updated_at: _putAt, ...putFields } = put.data?.data ?? ({} as Space);
    const { id: _patch, updated_at: _patchAt, ...patchFields } = patch.data?.data ?? ({} as Space);
    expect(putFields).toEqual(patchFields);
    expect(putFields).toMatchObject({ name: 'Twin 2', color: 4 });
  });
});
