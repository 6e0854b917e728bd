// Requests the routing refuses before any handler runs: unknown paths (404), methods a path lacks (405 with
// Allow), Accept headers that rule out JSON (406) and ids that are not ids.
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { expectProblem, rawRequest } from '../support/problems.js';
import { methodsOf, operations, pathOf, type SpecOperation, validForm } from '../support/spec-operations.js';
import { serverWithRecords } from './fixtures.js';

const FORM = 'application/x-www-form-urlencoded';
const { server, alice, ids, auth, recordIdOf } = await serverWithRecords();

describe('methods a path lacks (405)', () => {
  const CASES = [
    { method: 'POST', path: '/api/v1/domains/1', template: '/domains/{id}' },
    { method: 'DELETE', path: '/api/v1/domains', template: '/domains' },
    { method: 'PUT', path: '/api/v1/domains', template: '/domains' },
    { method: 'PATCH', path: '/api/v1/domains', template: '/domains' },
    { method: 'POST', path: '/api/v1/spaces/1', template: '/spaces/{id}' },
    { method: 'PUT', path: '/api/v1/spaces', template: '/spaces' },
    { method: 'DELETE', path: '/api/v1/spaces', template: '/spaces' },
  ];

  it.each(CASES)(
    '$method $path answers 405 with Allow listing the methods of the path',
    async ({ method, path, template }) => {
      const response = await server.fetch(path, { method, headers: auth() });
      await expectProblem(response, 405);
      const allow = (response.headers.get('allow') ?? '').split(',').map((m) => m.trim());
      expect(allow.sort()).toEqual(methodsOf(template).sort());
      expect(allow).not.toContain(method);
    },
  );

  it.each(CASES)('$method $path answers 405 before asking for a key', async ({ method, path }) => {
    const response = await server.fetch(path, { method });
    await expectProblem(response, 405);
    expect(response.headers.get('allow')).toBeTruthy();
  });
});

describe('Accept (406)', () => {
  const REFUSED = [
    'text/html',
    'application/xml',
    'text/plain, image/png',
    'application/json;q=0, application/problem+json;q=0, text/html',
    'application/*;q=0, */*',
  ];
  const ACCEPTED = [
    'application/json',
    '*/*',
    'application/*',
    'text/html, application/json;q=0.5',
    'application/problem+json',
    'text/html, application/problem+json;q=0.1',
    'application/json;q=0, application/problem+json',
  ];
  const reads = operations
    .filter((op) => op.method === 'GET')
    .map((operation) => ({ operation, operationId: operation.operationId }));

  it.each(reads.flatMap((c) => REFUSED.map((accept) => ({ ...c, accept }))))(
    '$operationId answers 406 to Accept: $accept',
    async ({ operation, accept }) => {
      const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
        headers: { ...auth(), Accept: accept },
      });
      const problem = await expectProblem(response, 406);
      expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}not-acceptable`);
    },
  );

  it.each(reads.flatMap((c) => ACCEPTED.map((accept) => ({ ...c, accept }))))(
    '$operationId answers 200 to Accept: $accept',
    async ({ operation, accept }) => {
      const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
        headers: { ...auth(), Accept: accept },
      });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    },
  );

  it.each(reads)('$operationId answers 200 without an Accept header', async ({ operation }) => {
    const response = await rawRequest(server.origin, 'GET', pathOf(operation, recordIdOf(operation)), auth());
    expect(response.status).toBe(200);
  });

  // What a spec-driven tool sends for an operation whose only documented body is a problem (RFC 9110 §12.5.1).
  it('serves a DELETE whose Accept admits only application/problem+json', async () => {
    const created = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=accept-problem&color=2',
    });
    expect(created.status).toBe(201);
    const { data } = (await created.json()) as { data: { id: number } };
    const accept = { ...auth(), Accept: 'application/problem+json' };
    const deleted = await server.fetch(`/api/v1/spaces/${data.id}`, { method: 'DELETE', headers: accept });
    expect(deleted.status).toBe(204);
    const again = await server.fetch(`/api/v1/spaces/${data.id}`, { method: 'DELETE', headers: accept });
    const problem = await expectProblem(again, 404);
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
  });

  it('answers 406 before looking at the query', async () => {
    const response = await server.fetch('/api/v1/domains?per_page=7&bogus=1', {
      headers: { ...auth(), Accept: 'text/html' },
    });
    const problem = await expectProblem(response, 406);
    expect(problem).not.toHaveProperty('errors');
  });
});

describe('unknown paths (404)', () => {
  const PATHS = [
    '/api/v1/nothing',
    '/api/v1/domains/1/extra',
    '/api/v1/domains/',
    '/api/v1/domains/1/',
    '/api/v1/spaces/',
    '/api/v1/spaces/1/',
    '/api/v1',
    '/api/v1/',
    '/API/V1/domains',
    '/api/v1/Domains',
    '/api/v2/domains',
    '/nothing',
  ];

  it.each(PATHS)('GET %s answers 404', async (path) => {
    const response = await server.fetch(path, { headers: auth() });
    const problem = await expectProblem(response, 404);
    expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}not-found`);
  });

  it.each(PATHS)('GET %s answers 404 without a key too', async (path) => {
    await expectProblem(await server.fetch(path), 404);
  });
});

describe('odd ids', () => {
  const REFUSED_AS_INVALID = ['0', '-1', '1.5', 'abc', '9007199254740992', '99999999999999999999', '%20', '1%2F2'];
  const ODD = [...REFUSED_AS_INVALID, '1e3', '0x1', '1.0'];
  const onRecord = operations
    .filter((op) => op.onRecord)
    .map((operation) => ({ operation, operationId: operation.operationId }));

  const send = (operation: SpecOperation, id: string) =>
    server.fetch(pathOf(operation, id), {
      method: operation.method,
      headers: { ...auth(), ...(operation.takesBody ? { 'Content-Type': FORM } : {}) },
      ...(operation.takesBody ? { body: validForm(operation, 'odd') } : {}),
    });

  it.each(onRecord.flatMap((c) => ODD.map((id) => ({ ...c, id }))))(
    '$operationId with id $id answers 4xx, never 5xx',
    async ({ operation, id }) => {
      const response = await send(operation, id);
      expect(response.status).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      await expectProblem(response, response.status);
    },
  );

  it.each(onRecord.flatMap((c) => REFUSED_AS_INVALID.map((id) => ({ ...c, id }))))(
    '$operationId with id $id answers 422 naming the path id',
    async ({ operation, id }) => {
      const problem = await expectProblem(await send(operation, id), 422);
      expect(problem.errors).toEqual([expect.objectContaining({ location: 'path', field: 'id' })]);
    },
  );

  it.each(onRecord)('$operationId with the largest id the spec allows answers 404', async ({ operation }) => {
    const problem = await expectProblem(await send(operation, '9007199254740991'), 404);
    expect(problem).not.toHaveProperty('errors');
  });

  it('left the records in place', async () => {
    expect((await alice.client.GET('/domains/{id}', { params: { path: { id: ids.domains } } })).response.status).toBe(
      200,
    );
    expect((await alice.client.GET('/spaces/{id}', { params: { path: { id: ids.spaces } } })).response.status).toBe(
      200,
    );
  });
});
