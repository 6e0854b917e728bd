// Bearer authentication of every /api/v1 operation: bad credentials get 401 before anything else is revealed,
// the scheme is case-insensitive, and keys are kept only as hashes.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '../../server/accounts/keys.js';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { RESOURCE_NAMES } from '../../server/resources.js';
import { publicIdOf, secretOf } from '../support/api-keys.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { operations, pathOf, type SpecOperation, validForm } from '../support/spec-operations.js';
import { createRecord, oneOfEach } from './fixtures.js';

let server: TestServer;
let alice: TestAccount;
let revoked: TestAccount;
let recordIds: Record<SpecOperation['resource'], number>;

const FORM = 'application/x-www-form-urlencoded';

beforeAll(async () => {
  server = await startServer();
  alice = await server.account('alice');
  revoked = await server.account('revoked');
  await revokeKey(server.db, publicIdOf(revoked.key));
  recordIds = await oneOfEach(alice);
});
afterAll(() => server.close());

/** Authorization header values that must all be refused; functions because keys exist only after beforeAll. */
const BAD_CREDENTIALS: Array<{ credential: string; header: () => string | undefined }> = [
  { credential: 'no Authorization header', header: () => undefined },
  { credential: '"Bearer" with no key', header: () => 'Bearer' },
  { credential: 'the Basic scheme', header: () => 'Basic xyz' },
  { credential: 'a malformed token', header: () => 'Bearer not-an-api-key' },
  { credential: 'a key with a short secret', header: () => `Bearer ${alice.key.slice(0, -1)}` },
  {
    credential: 'an unknown well-formed key',
    header: () => `Bearer dss_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`,
  },
  { credential: 'a revoked key', header: () => `Bearer ${revoked.key}` },
  {
    credential: 'a wrong secret for an existing key id',
    header: () => {
      const wrong = secretOf(alice.key).startsWith('A') ? 'B'.repeat(43) : 'A'.repeat(43);
      return `Bearer dss_${publicIdOf(alice.key)}_${wrong}`;
    },
  },
];

function send(
  operation: SpecOperation,
  init: {
    authorization?: string;
    id?: number | string;
    query?: string;
    headers?: Record<string, string>;
    body?: string;
  } = {},
) {
  const headers: Record<string, string> = {
    ...(operation.takesBody && init.body !== undefined ? { 'Content-Type': FORM } : {}),
    ...init.headers,
  };
  if (init.authorization !== undefined) headers.Authorization = init.authorization;
  const id = init.id ?? recordIds[operation.resource];
  return server.fetch(`${pathOf(operation, id)}${init.query ?? ''}`, {
    method: operation.method,
    headers,
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
}

async function expectUnauthorized(response: Response): Promise<Record<string, unknown>> {
  expect(response.status).toBe(401);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer(\s|$)/);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `${PROBLEM_TYPE_BASE}unauthorized`, title: 'Unauthorized', status: 401 });
  expect(body).not.toHaveProperty('errors');
  return body;
}

describe('every operation refuses bad credentials', () => {
  it('knows the six operations of every registered resource, and the actions on a record', () => {
    expect(operations.map((op) => op.operationId).sort()).toEqual(
      [
        ...['delete', 'list', 'patch', 'show', 'store', 'update'].flatMap((verb) =>
          RESOURCE_NAMES.map((resource) => `${resource}_${verb}`),
        ),
        'domains_verify',
      ].sort(),
    );
  });

  const cases = operations.flatMap((operation) =>
    BAD_CREDENTIALS.map((bad) => ({ ...bad, operation, operationId: operation.operationId })),
  );

  it.each(cases)('$operationId answers 401 to $credential', async ({ operation, header }) => {
    const response = await send(operation, {
      authorization: header(),
      ...(operation.takesBody ? { body: validForm(operation, randomBytes(4).toString('hex')) } : {}),
    });
    await expectUnauthorized(response);
  });

  it('left the records untouched while refusing', async () => {
    const domain = await alice.client.GET('/domains/{id}', { params: { path: { id: recordIds.domains } } });
    const space = await alice.client.GET('/spaces/{id}', { params: { path: { id: recordIds.spaces } } });
    expect(domain.response.status).toBe(200);
    expect(domain.data?.data.index_page).toBeNull();
    expect(space.response.status).toBe(200);
    expect(space.data?.data.color).toBe(3);
    const list = await alice.client.GET('/domains');
    expect(list.data?.meta.total).toBe(1);
  });
});

describe('authentication comes before validation', () => {
  /** Requests that would each be refused for their content, had they been authenticated. */
  const INVALID: Array<{
    flaw: string;
    applies: (op: SpecOperation) => boolean;
    init: { id?: string; query?: string; headers?: Record<string, string>; body?: string };
  }> = [
    { flaw: 'an unknown query parameter', applies: () => true, init: { query: '?secret_probe=1&per_page=7' } },
    { flaw: 'an id that is not an integer', applies: (op) => op.onRecord, init: { id: 'abc' } },
    { flaw: 'an Accept header ruling out JSON', applies: () => true, init: { headers: { Accept: 'text/html' } } },
    {
      flaw: 'malformed JSON',
      applies: (op) => op.takesBody,
      init: { headers: { 'Content-Type': 'application/json' }, body: '{"name":' },
    },
    { flaw: 'an unknown field', applies: (op) => op.takesBody, init: { body: 'secret_probe=1&color=99' } },
    {
      flaw: 'an unsupported content type',
      applies: (op) => op.takesBody,
      init: { headers: { 'Content-Type': 'text/plain' }, body: 'hello' },
    },
    { flaw: 'an oversized body', applies: (op) => op.takesBody, init: { body: `name=${'a'.repeat(20_000)}` } },
  ];
  const cases = operations.flatMap((operation) =>
    INVALID.filter((c) => c.applies(operation)).map((c) => ({ ...c, operation, operationId: operation.operationId })),
  );

  it.each(cases)('$operationId with $flaw and no key answers 401 without field errors', async ({ operation, init }) => {
    const body = await expectUnauthorized(await send(operation, init));
    expect(JSON.stringify(body)).not.toContain('secret_probe');
  });

  it.each(cases)('$operationId with $flaw and an unknown key answers 401', async ({ operation, init }) => {
    const unknownKey = `dss_${randomBytes(6).toString('hex')}_${randomBytes(32).toString('base64url')}`;
    await expectUnauthorized(await send(operation, { ...init, authorization: `Bearer ${unknownKey}` }));
  });
});

describe('the Bearer scheme', () => {
  const SUCCESS: Record<string, number> = { GET: 200, POST: 201, PUT: 200, PATCH: 200, DELETE: 204 };

  it.each(operations.map((operation) => ({ operation, operationId: operation.operationId })))(
    '$operationId accepts "bearer" in lower case',
    async ({ operation }) => {
      const id = operation.onRecord ? await createRecord(alice, operation.resource, 'lower') : undefined;
      const response = await send(operation, {
        authorization: `bearer ${alice.key}`,
        ...(id !== undefined ? { id } : {}),
        ...(operation.takesBody ? { body: validForm(operation, randomBytes(4).toString('hex')) } : {}),
      });
      // A POST on a record is an action (domains_verify): it answers 200 with the record, not 201.
      expect(response.status).toBe(operation.method === 'POST' && operation.onRecord ? 200 : SUCCESS[operation.method]);
    },
  );

  it.each(['BEARER', 'BeArEr'])('accepts the scheme written %s', async (scheme) => {
    const response = await server.fetch('/api/v1/spaces', { headers: { Authorization: `${scheme} ${alice.key}` } });
    expect(response.status).toBe(200);
  });

  it.each([
    { form: 'a key followed by another word', header: () => `Bearer ${alice.key} extra` },
    { form: 'the key without a scheme', header: () => alice.key },
    { form: 'the scheme glued to the key', header: () => `Bearer${alice.key}` },
  ])('refuses $form', async ({ header }) => {
    await expectUnauthorized(await server.fetch('/api/v1/spaces', { headers: { Authorization: header() } }));
  });
});

describe('key storage', () => {
  it('keeps no key and no secret in the api_keys table', async () => {
    const keys = [alice.key, revoked.key, (await server.account('storage-check')).key];
    const rows = await server.db.selectFrom('api_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThanOrEqual(keys.length);
    const stored = rows.flatMap((row) => Object.values(row).map((value) => String(value)));
    for (const key of keys) {
      expect(stored).not.toContain(key);
      expect(stored).not.toContain(secretOf(key));
      expect(stored.filter((value) => value.includes(secretOf(key)))).toEqual([]);
    }
  });
});
