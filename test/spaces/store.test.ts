// POST /spaces: creating a space from a form or JSON body, the colour default and range, the name rules.
import { describe, expect, it } from 'vitest';
import { clientOf, ENCODINGS } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { fieldsOf } from '../support/problems.js';
import { ACCEPTED_NAMES, REJECTED_FORM_COLORS, REJECTED_JSON_COLORS, REJECTED_NAMES } from './fixtures.js';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const { server, account: alice } = await serverForFile();

describe('spaces_store', () => {
  it.each(ENCODINGS)('creates a space from a %s body and answers 201 with Location', async (encoding) => {
    const { data, response } = await clientOf(alice, encoding).POST('/spaces', {
      body: { name: 'Marketing', color: 3 },
    });
    expect(response.status).toBe(201);
    const space = data?.data;
    expect(space).toMatchObject({ name: 'Marketing', color: 3 });
    expect(space?.id).toBeGreaterThan(0);
    expect(space?.created_at).toMatch(TIMESTAMP);
    expect(space?.updated_at).toBe(space?.created_at);
    expect(response.headers.get('location')).toBe(`/api/v1/spaces/${space?.id}`);
  });

  it('answers with a Location that shows the stored space', async () => {
    const { data, response } = await alice.client.POST('/spaces', { body: { name: 'Design', color: 5 } });
    const location = response.headers.get('location') ?? '';
    const shown = await server.fetch(location, { headers: { Authorization: `Bearer ${alice.key}` } });
    expect(shown.status).toBe(200);
    expect(await shown.json()).toEqual({ data: data?.data });
  });

  it('gives every new space its own id', async () => {
    const first = await alice.client.POST('/spaces', { body: { name: 'Same' } });
    const second = await alice.client.POST('/spaces', { body: { name: 'Same' } });
    expect(second.response.status).toBe(201);
    expect(second.data?.data.id).not.toBe(first.data?.data.id);
  });
});

describe('spaces_store color', () => {
  it.each(ENCODINGS)('defaults color to 1 when omitted (%s)', async (encoding) => {
    const { data, response } = await clientOf(alice, encoding).POST('/spaces', { body: { name: 'No colour' } });
    expect(response.status).toBe(201);
    expect(data?.data.color).toBe(1);
  });

  it('stores form color=3 as the integer 3', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice.key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=Typed&color=3',
    });
    expect(response.status).toBe(201);
    const { data } = await response.json();
    expect(data.color).toBe(3);
    expect(typeof data.color).toBe('number');
  });

  it.each([1, 2, 3, 4, 5, 6].flatMap((color) => ENCODINGS.map((encoding) => ({ encoding, color }))))(
    'accepts color $color ($encoding)',
    async ({ encoding, color }) => {
      const { data, response } = await clientOf(alice, encoding).POST('/spaces', { body: { name: 'Coloured', color } });
      expect(response.status).toBe(201);
      expect(data?.data.color).toBe(color);
    },
  );

  it.each(REJECTED_FORM_COLORS)('rejects form color=%j with 422 naming color', async (color) => {
    const { error, response } = await alice.client.POST('/spaces', { body: { name: 'Bad', color: color as never } });
    expect(response.status).toBe(422);
    expect(error?.type).toBe('/problems/validation');
    expect(fieldsOf(error)).toEqual(['body:color']);
  });

  it.each(REJECTED_JSON_COLORS)('rejects JSON color %j with 422 naming color', async (color) => {
    const { error, response } = await alice.json.POST('/spaces', { body: { name: 'Bad', color: color as never } });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:color']);
  });

  it('stores nothing when the color is rejected', async () => {
    const { response } = await alice.json.POST('/spaces', { body: { name: 'Never stored', color: '3' as never } });
    expect(response.status).toBe(422);
    const rows = await server.db.selectFrom('spaces').select('id').where('name', '=', 'Never stored').execute();
    expect(rows).toEqual([]);
  });
});

describe('spaces_store name', () => {
  it.each(ACCEPTED_NAMES.flatMap((c) => ENCODINGS.map((encoding) => ({ ...c, encoding }))))(
    'accepts $label and stores it as sent, trimmed ($encoding)',
    async ({ encoding, sent, stored }) => {
      const { data, response } = await clientOf(alice, encoding).POST('/spaces', { body: { name: sent } });
      expect(response.status).toBe(201);
      expect(data?.data.name).toBe(stored);
      const shown = await alice.client.GET('/spaces/{id}', { params: { path: { id: data?.data.id ?? 0 } } });
      expect(shown.data?.data.name).toBe(stored);
    },
  );

  it.each(REJECTED_NAMES.flatMap((c) => ENCODINGS.map((encoding) => ({ ...c, encoding }))))(
    'rejects a name that is $label with 422 naming name ($encoding)',
    async ({ encoding, sent }) => {
      const { error, response } = await clientOf(alice, encoding).POST('/spaces', { body: { name: sent } });
      expect(response.status).toBe(422);
      expect(fieldsOf(error)).toEqual(['body:name']);
    },
  );

  it.each(ENCODINGS)('rejects a missing name with 422 naming name (%s)', async (encoding) => {
    const { error, response } = await clientOf(alice, encoding).POST('/spaces', { body: { color: 2 } as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:name']);
    expect(error?.errors?.[0]?.message).toMatch(/required/);
  });

  it('rejects a JSON name with a lone surrogate, which is not a character, with 422 naming name', async () => {
    // Accepted, it comes back with each lone surrogate turned into three U+FFFD: not the name sent, and
    // 200 of them with 55 letters make a stored name of 655 characters.
    const { data, error, response } = await alice.json.POST('/spaces', {
      body: { name: `${'\ud83d'.repeat(200)}${'x'.repeat(55)}` },
    });
    expect({ status: response.status, storedLength: data?.data.name.length }).toEqual({
      status: 422,
      storedLength: undefined,
    });
    expect(fieldsOf(error)).toEqual(['body:name']);
  });

  it('rejects an empty form body with 422 naming name', async () => {
    const { error, response } = await alice.client.POST('/spaces', { body: {} as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:name']);
  });
});

describe('spaces_store unknown and several bad fields', () => {
  it.each(ENCODINGS)('rejects unknown fields with 422 naming each (%s)', async (encoding) => {
    const body = { name: 'Extra', colour: 2, owner: 'bob' };
    const { error, response } = await clientOf(alice, encoding).POST('/spaces', { body: body as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:colour', 'body:owner']);
  });

  it.each(['id', 'created_at', 'updated_at'])('rejects the read-only field %s on store', async (field) => {
    const { error, response } = await alice.json.POST('/spaces', {
      body: { name: 'Read-only', [field]: field === 'id' ? 99 : '2020-01-01T00:00:00.000Z' } as never,
    });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual([`body:${field}`]);
  });

  it.each(ENCODINGS)('names every bad field once, however many rules it breaks (%s)', async (encoding) => {
    // An empty name breaks both the minimum length and the name format: still one entry for it.
    const body = { name: '', color: 9, colour: 2 };
    const { error, response } = await clientOf(alice, encoding).POST('/spaces', { body: body as never });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:color', 'body:colour', 'body:name']);
    for (const entry of error?.errors ?? []) expect(entry.message).not.toBe('');
  });
});
