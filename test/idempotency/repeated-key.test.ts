// Two Idempotency-Key headers on one request: Node would join them into one key ("a, b") that no client sent,
// so the request is refused with a 400 problem, like two Authorization headers, and creates nothing.
import { describe, expect, it } from 'vitest';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { serverWithRecords } from '../http/fixtures.js';
import { sendRaw } from '../support/raw-http.js';
import { operations, pathOf, validForm } from '../support/spec-operations.js';

const { server, alice, auth, recordIdOf } = await serverWithRecords();

describe('two Idempotency-Key headers (400)', () => {
  const creates = operations.filter((operation) => operation.method === 'POST' && !operation.onRecord);

  it.each(creates.map((operation) => ({ operation })))(
    '$operation.operationId refuses them and creates nothing',
    async ({ operation }) => {
      const listPath = pathOf(operation, recordIdOf(operation));
      const count = async () => {
        const list = await server.fetch(listPath, { headers: auth() });
        return ((await list.json()) as { meta: { total: number } }).meta.total;
      };
      const before = await count();
      const body = validForm(operation, 'repeated');
      const answer = await sendRaw(
        server.origin,
        `POST ${listPath} HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${alice.key}\r\n` +
          'Idempotency-Key: first\r\nIdempotency-Key: second\r\n' +
          `Content-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n` +
          `Connection: close\r\n\r\n${body}`,
      );
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(answer.body)).toMatchObject({
        type: `${PROBLEM_TYPE_BASE}ambiguous-idempotency-key`,
        status: 400,
        detail: 'Send one Idempotency-Key header; this request has 2.',
        request_id: answer.headers['x-request-id'],
      });
      expect(await count()).toBe(before);
    },
  );

  it('still takes one Idempotency-Key header', async () => {
    const create = () =>
      server.fetch('/api/v1/spaces', {
        method: 'POST',
        headers: { ...auth(), 'Idempotency-Key': 'one-key', 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'name=Once',
      });
    const first = await create();
    expect(first.status).toBe(201);
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
  });
});
