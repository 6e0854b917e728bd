// Errors of the API as problem+json: bodies that cannot be read (400, 413, 415) and one example of every
// error status, each with type, title, status, detail and the request id.
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { expectProblem, rawRequest } from '../support/problems.js';
import { operations, pathOf, validForm } from '../support/spec-operations.js';
import { serverWithRecords } from './fixtures.js';

const FORM = 'application/x-www-form-urlencoded';
const { server, alice, auth, recordIdOf } = await serverWithRecords();
const LIMIT = 16 * 1024;
const bodyOperations = operations
  .filter((op) => op.takesBody)
  .map((operation) => ({ operation, operationId: operation.operationId }));

describe('unparseable bodies (400)', () => {
  const MALFORMED = [
    '{"name":',
    '{name: "x.example.com"}',
    "{'name':'x.example.com'}",
    '{"name":"x.example.com",}',
    'not json',
  ];
  const cases = bodyOperations.flatMap((c) => MALFORMED.map((json) => ({ ...c, json })));

  it.each(cases)('$operationId answers 400 to JSON $json', async ({ operation, json }) => {
    const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
      method: operation.method,
      headers: { ...auth(), 'Content-Type': 'application/json' },
      body: json,
    });
    const body = await expectProblem(response, 400);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}malformed-body`);
    expect(body).not.toHaveProperty('errors');
  });
});

describe('forms that are not UTF-8 (400)', () => {
  const cases = bodyOperations.flatMap((c) =>
    ['name=%E4rger', 'index_page=%FF', 'color=1&%C3=x'].map((form) => ({ ...c, form })),
  );

  it.each(cases)('$operationId answers 400 to the form $form', async ({ operation, form }) => {
    const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
      method: operation.method,
      headers: { ...auth(), 'Content-Type': FORM },
      body: form,
    });
    const body = await expectProblem(response, 400);
    expect(body.type).toBe(`${PROBLEM_TYPE_BASE}malformed-body`);
    expect(body.detail).toContain('UTF-8');
  });
});

describe('oversized bodies (413)', () => {
  const OVERSIZED_BODIES = [
    { encoding: 'form', contentType: FORM, body: (size: number) => `name=${'a'.repeat(size - 'name='.length)}` },
    {
      encoding: 'JSON',
      contentType: 'application/json',
      body: (size: number) => JSON.stringify({ name: 'a'.repeat(size - '{"name":""}'.length) }),
    },
  ];
  const cases = bodyOperations.flatMap((c) => OVERSIZED_BODIES.map((e) => ({ ...c, ...e })));

  it.each(cases)(
    '$operationId answers 413 to a $encoding body of 16 KiB + 1 byte',
    async ({ operation, contentType, body }) => {
      const payload = body(LIMIT + 1);
      expect(Buffer.byteLength(payload)).toBe(LIMIT + 1);
      const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
        method: operation.method,
        headers: { ...auth(), 'Content-Type': contentType },
        body: payload,
      });
      const problem = await expectProblem(response, 413);
      expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}content-too-large`);
    },
  );

  it.each(cases)(
    '$operationId reads a $encoding body of exactly 16 KiB (and rejects its content instead)',
    async ({ operation, contentType, body }) => {
      const payload = body(LIMIT);
      expect(Buffer.byteLength(payload)).toBe(LIMIT);
      const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
        method: operation.method,
        headers: { ...auth(), 'Content-Type': contentType },
        body: payload,
      });
      // The name is far too long for a domain or a space, and domain updates take no name at all.
      const problem = await expectProblem(response, 422);
      expect(problem.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ location: 'body', field: 'name' })]),
      );
    },
  );
});

describe('oversized bodies sent in chunks (413)', () => {
  /** A body sent with Transfer-Encoding: chunked, so that no Content-Length announces its size. */
  const chunked = (text: string) => {
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < bytes.length; at += 1024) controller.enqueue(bytes.slice(at, at + 1024));
        controller.close();
      },
    });
    return { body: stream, duplex: 'half' } as RequestInit;
  };

  it('answers 413 to a chunked form of more than 16 KiB', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': FORM },
      ...chunked(`name=${'a'.repeat(LIMIT)}`),
    });
    await expectProblem(response, 413);
  });

  it('reads a small chunked form', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': FORM },
      ...chunked('name=Chunked&color=4'),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ data: { name: 'Chunked', color: 4 } });
    await server.fetch(response.headers.get('location') as string, { method: 'DELETE', headers: auth() });
  });
});

describe('unsupported content types (415)', () => {
  const TYPES = ['text/plain', 'application/xml', 'text/html; charset=utf-8', 'application/json-patch+json'];

  it.each(bodyOperations.flatMap((c) => TYPES.map((contentType) => ({ ...c, contentType }))))(
    '$operationId answers 415 to $contentType',
    async ({ operation, contentType }) => {
      const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
        method: operation.method,
        headers: { ...auth(), 'Content-Type': contentType },
        body: validForm(operation, 'ct'),
      });
      const problem = await expectProblem(response, 415);
      expect(problem.type).toBe(`${PROBLEM_TYPE_BASE}unsupported-media-type`);
    },
  );

  it.each(bodyOperations)('$operationId answers 415 to multipart/form-data', async ({ operation }) => {
    const form = new FormData();
    form.set('name', 'multipart.example.com');
    const response = await server.fetch(pathOf(operation, recordIdOf(operation)), {
      method: operation.method,
      headers: auth(),
      body: form,
    });
    await expectProblem(response, 415);
  });

  it.each(bodyOperations)('$operationId answers 415 to a body without Content-Type', async ({ operation }) => {
    const response = await rawRequest(
      server.origin,
      operation.method,
      pathOf(operation, recordIdOf(operation)),
      auth(),
      validForm(operation, 'none'),
    );
    await expectProblem(response, 415);
  });

  it('stored nothing from the refused bodies', async () => {
    const list = await alice.client.GET('/domains', { params: { query: { per_page: 100 } } });
    expect(list.data?.meta.total).toBe(1);
    const spaces = await alice.client.GET('/spaces', { params: { query: { per_page: 100 } } });
    expect(spaces.data?.meta.total).toBe(1);
  });
});

describe('problem details', () => {
  const SCENARIOS: Array<{ scenario: string; status: number; send: () => Promise<Response> }> = [
    {
      scenario: 'a malformed JSON body',
      status: 400,
      send: () =>
        server.fetch('/api/v1/domains', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': 'application/json' },
          body: '{',
        }),
    },
    { scenario: 'a missing key', status: 401, send: () => server.fetch('/api/v1/spaces') },
    { scenario: 'an unknown id', status: 404, send: () => server.fetch('/api/v1/spaces/424242', { headers: auth() }) },
    { scenario: 'an unknown path', status: 404, send: () => server.fetch('/api/v1/nothing', { headers: auth() }) },
    {
      scenario: 'a missing method',
      status: 405,
      send: () => server.fetch('/api/v1/spaces', { method: 'DELETE', headers: auth() }),
    },
    {
      scenario: 'an Accept ruling out JSON',
      status: 406,
      send: () => server.fetch('/api/v1/spaces', { headers: { ...auth(), Accept: 'text/html' } }),
    },
    {
      scenario: 'a duplicate domain',
      status: 409,
      send: async () => {
        await alice.client.POST('/domains', { body: { name: 'twice.example.com' } });
        return server.fetch('/api/v1/domains', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': FORM },
          body: 'name=twice.example.com',
        });
      },
    },
    {
      scenario: 'an oversized body',
      status: 413,
      send: () =>
        server.fetch('/api/v1/spaces', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': FORM },
          body: `name=${'x'.repeat(LIMIT)}`,
        }),
    },
    {
      scenario: 'an unsupported content type',
      status: 415,
      send: () =>
        server.fetch('/api/v1/spaces', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': 'text/plain' },
          body: 'name=x',
        }),
    },
    {
      scenario: 'an invalid field',
      status: 422,
      send: () =>
        server.fetch('/api/v1/spaces', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': FORM },
          body: 'name=x&color=9',
        }),
    },
  ];

  it.each(SCENARIOS)('$scenario answers $status as problem+json with the request id', async ({ status, send }) => {
    const response = await send();
    const body = await expectProblem(response, status);
    expect(Object.keys(body).sort()).toEqual(
      ['detail', 'request_id', 'status', 'title', 'type', ...(status === 422 ? ['errors'] : [])].sort(),
    );
  });
});
