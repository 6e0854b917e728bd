// JSON sent under the form's Content-Type (what `curl -d` does) or with none is refused with a 415 that says
// which header to send, instead of a 422 that names the whole document as a field.
import { describe, expect, it } from 'vitest';
import { expectProblem, rawRequest } from '../support/problems.js';
import { operations, pathOf } from '../support/spec-operations.js';
import { serverWithRecords } from './fixtures.js';

const FORM = 'application/x-www-form-urlencoded';
const { server, auth, recordIdOf } = await serverWithRecords();
const bodyOperations = operations
  .filter((op) => op.takesBody)
  .map((operation) => ({ operation, operationId: operation.operationId }));

describe('JSON sent as a form', () => {
  const JSON_BODIES = ['{"name":"B","color":3}', '  {"index_page": null}\n', '[1, 2]', '{}'];
  const cases = bodyOperations.flatMap((c) => JSON_BODIES.map((json) => ({ ...c, json })));

  it.each(cases)('$operationId answers 415 naming Content-Type: application/json to $json', async (c) => {
    const response = await server.fetch(pathOf(c.operation, recordIdOf(c.operation)), {
      method: c.operation.method,
      headers: { ...auth(), 'Content-Type': FORM },
      body: c.json,
    });
    const problem = await expectProblem(response, 415);
    expect(problem.detail).toBe(
      'The body is JSON but was sent as application/x-www-form-urlencoded (what curl -d sends unless told ' +
        'otherwise): send it with "Content-Type: application/json", or send a form such as name=Marketing&color=3.',
    );
    expect(problem).not.toHaveProperty('errors');
  });

  it('still reads a form whose value looks like JSON', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': FORM },
      body: 'name=%7B%22a%22%3A1%7D',
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ data: { name: '{"a":1}' } });
  });

  it('still answers 422 to a form that only starts like JSON', async () => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': FORM },
      body: '{name=x',
    });
    const problem = await expectProblem(response, 422);
    expect(problem.detail).not.toContain('Content-Type');
  });
});

describe('a body without a Content-Type', () => {
  it.each(bodyOperations)('$operationId answers 415 naming both Content-Types', async ({ operation }) => {
    const response = await rawRequest(
      server.origin,
      operation.method,
      pathOf(operation, recordIdOf(operation)),
      { ...auth(), Accept: 'application/json' },
      '{"name":"B","color":3}',
    );
    const problem = await expectProblem(response, 415);
    expect(problem.detail).toBe(
      'A body without a Content-Type is not supported. This operation takes "Content-Type: ' +
        'application/x-www-form-urlencoded" or "Content-Type: application/json".',
    );
  });
});

describe('an operation that takes JSON only', () => {
  it.each([
    [FORM, 'url=https%3A%2F%2Fhooks.example.com%2Fx&enabled_events=*'],
    [FORM, '{"url": "https://hooks.example.com/x", "enabled_events": ["*"]}'],
    ['text/plain', 'url'],
    [undefined, '{"url": "https://hooks.example.com/x"}'],
  ])('answers %s with a 415 naming what it accepts', async (type, body) => {
    const response = await rawRequest(
      server.origin,
      'POST',
      '/api/v1/webhook-endpoints',
      { ...auth(), Accept: 'application/json', ...(type ? { 'Content-Type': type } : {}) },
      body,
    );
    const problem = await expectProblem(response, 415);
    expect(problem.detail).toContain('"Content-Type: application/json"');
    expect(problem.detail).not.toMatch(/send a form|"Content-Type: application\/x-www-form-urlencoded"/);
  });
});
