// Input a hostile or careless client sends, each answered with a documented 4xx problem and never a 500, on
// either engine: numbers past every range, control characters, bad %-escapes in query strings, two
// Authorization headers, an absolute-form request target, "__proto__" as a form field.
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { expectProblem } from '../support/problems.js';
import { sendRaw } from '../support/raw-http.js';
import { operations, pathOf } from '../support/spec-operations.js';
import { serverWithRecords } from './fixtures.js';

const { server, alice, auth, recordIdOf } = await serverWithRecords();
const NINES = '9'.repeat(400);
const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

async function expectFieldError(response: Response, location: string, field: string, message: RegExp) {
  const body = await expectProblem(response, 422);
  expect(body.errors).toEqual([{ location, field, message: expect.stringMatching(message) }]);
}

describe('integers past their range (422, checked before they become numbers)', () => {
  const onRecord = operations.filter((op) => op.onRecord);
  it.each(onRecord.flatMap((operation) => [NINES, '9007199254740992', `-${NINES}`].map((id) => ({ operation, id }))))(
    '$operation.operationId refuses the id $id',
    async ({ operation, id }) => {
      const response = await server.fetch(pathOf(operation, id), {
        method: operation.method,
        headers: { ...auth(), ...FORM },
        body: operation.takesBody ? 'name=x' : undefined,
      });
      const body = await expectProblem(response, 422);
      const errors = body.errors as Array<{ field: string; message: string }>;
      expect(errors.find((e) => e.field === 'id')?.message).toMatch(/^must be an integer from 1 to \d+$/);
      expect(JSON.stringify(body)).not.toContain('Infinity');
    },
  );

  const lists = operations.filter((op) => op.method === 'GET' && !op.onRecord);
  it.each(
    lists.flatMap((operation) =>
      [
        ['page', NINES, /must be an integer from 1 to 9007199254740991/],
        ['page', '9007199254740992', /must be an integer from 1 to 9007199254740991/],
        ['per_page', NINES, /^must be one of 10, 25, 50, 100$/],
      ].map(([name, value, message]) => ({ operation, name: name as string, value: value as string, message })),
    ),
  )('$operation.operationId refuses $name of $value.length digits', async ({ operation, name, value, message }) => {
    const response = await server.fetch(`${pathOf(operation)}?${name}=${value}`, { headers: auth() });
    await expectFieldError(response, 'query', name, message as RegExp);
  });

  it.each([NINES, '9007199254740992'])('refuses a form color of %s.length digits as out of range', async (color) => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), ...FORM },
      body: `name=Big&color=${color}`,
    });
    await expectFieldError(response, 'body', 'color', /^must be an integer from 1 to 6$/);
  });
});

describe('control characters in search (422 on every engine)', () => {
  const lists = operations.filter((op) => op.method === 'GET' && !op.onRecord);
  it.each(
    lists.flatMap((operation) =>
      ['%00', 'a%00b', '%01', '%1F', '%7F', '%C2%85'].map((value) => ({ operation, value })),
    ),
  )('$operation.operationId refuses search=$value', async ({ operation, value }) => {
    const response = await server.fetch(`${pathOf(operation)}?search=${value}`, { headers: auth() });
    await expectFieldError(response, 'query', 'search', /control characters/);
  });

  it('accepts ordinary text', async () => {
    const response = await server.fetch('/api/v1/spaces?search=space', { headers: auth() });
    expect(response.status).toBe(200);
  });
});

describe('query strings read like form bodies (400)', () => {
  const lists = operations.filter((op) => op.method === 'GET' && !op.onRecord);
  it.each(
    lists.flatMap((operation) =>
      ['search=%ZZ', 'search=%E4rger', 'search=%', 'page=1&%FF=1'].map((query) => ({ operation, query })),
    ),
  )('$operation.operationId answers 400 to ?$query, as a form body with it would be', async ({ operation, query }) => {
    const response = await server.fetch(`${pathOf(operation)}?${query}`, { headers: auth() });
    const body = await expectProblem(response, 400);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}malformed-query`);
  });

  it.each([
    ['101 parameters', Array.from({ length: 101 }, (_, i) => `p${i}=1`).join('&'), 101],
    ['8,000 empty parts between "&"', `search=${'&'.repeat(8000)}x`, 8001],
  ])('answers 400 to a query of %s, naming the count and the limit', async (_what, query, count) => {
    const response = await server.fetch(`/api/v1/spaces?${query}`, { headers: auth() });
    const body = await expectProblem(response, 400);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}malformed-query`);
    expect(body.detail).toContain(`has ${count} parameters`);
    expect(body.detail).toContain('the limit is 100');
  });

  it('serves a query of 100 parameters, empty ones counted', async () => {
    const response = await server.fetch(`/api/v1/spaces?search=x${'&'.repeat(99)}`, { headers: auth() });
    expect(response.status).toBe(200);
  });

  it('answers the same bad escape in a form body with 400 too', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), ...FORM },
      body: 'name=%ZZ',
    });
    const body = await expectProblem(response, 400);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}malformed-body`);
  });

  it('still reads well-formed escapes and UTF-8', async () => {
    const response = await server.fetch('/api/v1/spaces?search=%C3%A4rger%20x+y', { headers: auth() });
    expect(response.status).toBe(200);
  });
});

describe('two Authorization headers (400)', () => {
  it.each(operations.map((operation) => ({ operation })))(
    '$operation.operationId refuses them',
    async ({ operation }) => {
      const key = `Authorization: Bearer ${alice.key}`;
      const answer = await sendRaw(
        server.origin,
        `${operation.method} ${pathOf(operation, recordIdOf(operation))} HTTP/1.1\r\nHost: test\r\n${key}\r\n` +
          'Authorization: Bearer dss_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\r\nConnection: close\r\n\r\n',
      );
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(answer.body)).toMatchObject({
        type: `${PROBLEM_TYPE_BASE}ambiguous-credentials`,
        request_id: answer.headers['x-request-id'],
      });
      expect(answer.headers['www-authenticate']).toMatch(/error="invalid_request"/);
    },
  );
});

describe('an absolute-form request target', () => {
  it('is read as its path and query, like the origin-form', async () => {
    const answer = await sendRaw(
      server.origin,
      `GET http://elsewhere.example/api/v1/spaces?per_page=25 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${alice.key}\r\nConnection: close\r\n\r\n`,
    );
    expect(answer.status).toBe(200);
    const body = JSON.parse(answer.body) as { meta: { per_page: number }; links: { first: string } };
    expect(body.meta.per_page).toBe(25);
    expect(body.links.first).toBe('/api/v1/spaces?per_page=25&page=1');
  });

  it.each(['PUT', 'PATCH', 'DELETE'])(
    'works for %s on a record, and a wrong id there is a 404 problem',
    async (method) => {
      const answer = await sendRaw(
        server.origin,
        `${method} https://x/api/v1/spaces/123456789 HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${alice.key}\r\n` +
          'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 7\r\nConnection: close\r\n\r\ncolor=2',
      );
      expect(answer.status).toBe(404);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    },
  );

  it('of an unknown path is a 404 problem', async () => {
    const answer = await sendRaw(
      server.origin,
      'GET http://x/nothing/here HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n',
    );
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 404, request_id: answer.headers['x-request-id'] });
  });
});

describe('"__proto__" and other prototype names as fields (422, like any unknown field)', () => {
  const writes = operations.filter((op) => op.takesBody);
  it.each(
    writes.flatMap((operation) => ['__proto__', 'constructor', 'prototype'].map((field) => ({ operation, field }))),
  )('$operation.operationId refuses the form field $field', async ({ operation, field }) => {
    const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
      method: operation.method,
      headers: { ...auth(), ...FORM },
      body: `${field}=x`,
    });
    const body = await expectProblem(response, 422);
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', field })]));
  });

  it('refuses "__proto__" in a JSON body too', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/json' },
      body: '{"name":"Proto","__proto__":{"color":3}}',
    });
    await expectFieldError(response, 'body', '__proto__', /not a field/);
  });

  it('refuses "__proto__" as a query parameter', async () => {
    const response = await server.fetch('/api/v1/domains?__proto__=x', { headers: auth() });
    await expectFieldError(response, 'query', '__proto__', /not a parameter/);
  });
});
