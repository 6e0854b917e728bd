// X-Request-Id: every response carries one; a sane client id is echoed (and used as request_id), any other
// is replaced by a new UUID.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../support/file-server.js';
import { expectProblem, UUID } from '../support/problems.js';
import { createRecord } from './fixtures.js';

const FORM = 'application/x-www-form-urlencoded';
const { server, account: alice } = await serverForFile();

const auth = () => ({ Authorization: `Bearer ${alice.key}` });

describe('X-Request-Id', () => {
  const RESPONSES: Array<{ response: string; send: () => Promise<Response> }> = [
    { response: 'a list', send: () => server.fetch('/api/v1/domains', { headers: auth() }) },
    {
      response: 'a store',
      send: () =>
        server.fetch('/api/v1/spaces', {
          method: 'POST',
          headers: { ...auth(), 'Content-Type': FORM },
          body: 'name=Traced',
        }),
    },
    {
      response: 'a delete',
      send: async () =>
        server.fetch(`/api/v1/spaces/${await createRecord(alice, 'spaces', 'doomed')}`, {
          method: 'DELETE',
          headers: auth(),
        }),
    },
    { response: 'an error', send: () => server.fetch('/api/v1/domains/999999', { headers: auth() }) },
    { response: 'a 401', send: () => server.fetch('/api/v1/domains') },
    { response: 'the spec', send: () => server.fetch('/openapi.json') },
    { response: 'a health check', send: () => server.fetch('/healthz') },
    { response: 'a 404 outside the API', send: () => server.fetch('/favicon.ico') },
  ];

  it.each(RESPONSES)('is set on $response', async ({ send }) => {
    const response = await send();
    expect(response.headers.get('x-request-id')).toMatch(UUID);
  });

  const SANE = ['client-id-1', 'A.b_C-9', 'x', 'r'.repeat(128)];

  it.each(SANE)('echoes the client id %s in the header and the problem body', async (given) => {
    const response = await server.fetch('/api/v1/domains/999999', { headers: { ...auth(), 'X-Request-Id': given } });
    expect(response.headers.get('x-request-id')).toBe(given);
    expect((await expectProblem(response, 404)).request_id).toBe(given);
  });

  it('echoes the client id on a success', async () => {
    const response = await server.fetch('/api/v1/spaces', { headers: { ...auth(), 'X-Request-Id': 'trace-ok' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toBe('trace-ok');
  });

  const INSANE = [
    { why: 'too long', given: 'r'.repeat(129) },
    { why: 'with spaces', given: 'has spaces in it' },
    { why: 'with a slash', given: '../../etc/passwd' },
    { why: 'with quotes and angle brackets', given: '"><script>' },
    { why: 'with a newline-like escape', given: 'a%0d%0ab' },
  ];

  it.each(INSANE)('replaces a client id $why with a new UUID', async ({ given }) => {
    const response = await server.fetch('/api/v1/domains/999999', { headers: { ...auth(), 'X-Request-Id': given } });
    const id = response.headers.get('x-request-id');
    expect(id).not.toBe(given);
    expect(id).toMatch(UUID);
    expect((await expectProblem(response, 404)).request_id).toBe(id);
  });

  it('gives each request its own id', async () => {
    const ids = await Promise.all(
      [1, 2, 3].map(() => server.fetch('/healthz').then((r) => r.headers.get('x-request-id'))),
    );
    expect(new Set(ids).size).toBe(3);
  });
});
