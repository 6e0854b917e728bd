// The HTTP edge of the service as server/lifecycle.ts sets it up: requests Node refuses before Express sees
// them answered as problem+json with a request id, HEAD wherever GET is, the security headers on every
// answer, and /readyz during a drain.
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { Lifecycle } from '../../server/lifecycle.js';
import { createLogger } from '../../server/logger.js';
import { expectProblem } from '../support/problems.js';
import { type RawAnswer, sendRaw } from '../support/raw-http.js';
import { sharedValidation } from '../support/server.js';
import { operations, pathOf } from '../support/spec-operations.js';
import { serverWithRecords } from './fixtures.js';

const { server, auth, recordIdOf } = await serverWithRecords();

/** The app behind the service's own HTTP server (limits, client errors), on the test file's database. */
async function edgeServer(isDraining = () => false) {
  const lines: string[] = [];
  const logger = createLogger('info', (line) => lines.push(line));
  const app = await createApp({ db: server.db, logger, isDraining, validation: sharedValidation() });
  const limits = {
    headersTimeoutMs: 1000,
    requestTimeoutMs: 1500,
    idleTimeoutMs: 1000,
    sendTimeoutMs: 5000,
    maxConnections: 1000,
    shutdownGraceMs: 1000,
    drainDelayMs: 0,
  };
  const http = new Lifecycle(limits, logger).listen(app, 0, '127.0.0.1');
  await new Promise((resolve) => http.once('listening', resolve));
  return {
    origin: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    lines,
    close: () => {
      http.closeAllConnections();
      return new Promise((resolve) => http.close(resolve));
    },
  };
}

function expectRawProblem(answer: RawAnswer, status: number, kind: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(JSON.parse(answer.body)).toMatchObject({
    type: `${PROBLEM_TYPE_BASE}${kind}`,
    status,
    detail: expect.stringMatching(/\S/),
    request_id: answer.headers['x-request-id'],
  });
}

describe('requests Node refuses before Express sees them (problem+json, request id, logged once)', () => {
  let edge: Awaited<ReturnType<typeof edgeServer>>;
  beforeAll(async () => {
    edge = await edgeServer();
  });
  afterAll(() => edge.close());

  it.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400, 'malformed-request'],
    ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed-request'],
    [
      'a bad Transfer-Encoding',
      'POST /api/v1/spaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n',
      400,
      'malformed-request',
    ],
    [
      'Transfer-Encoding with Content-Length',
      'POST /api/v1/spaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
      400,
      'malformed-request',
    ],
    ['a bare CR', 'GET /healthz HTTP/1.1\rHost: x\r\n\r\n', 400, 'malformed-request'],
    ['a space in the target', 'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 400, 'malformed-request'],
    [
      'headers over the size limit',
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
      431,
      'header-too-large',
    ],
    [
      'a bad chunk',
      'POST /api/v1/spaces HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      400,
      'malformed-request',
    ],
    ['no Host header', 'GET /healthz HTTP/1.1\r\n\r\n', 400, 'malformed-request'],
  ])('answers %s', async (_what, text, status, kind) => {
    const before = edge.lines.length;
    const answer = await sendRaw(edge.origin, text);
    expectRawProblem(answer, status as number, kind as string);
    const id = answer.headers['x-request-id'] as string;
    const logged = edge.lines.slice(before).filter((line) => line.includes(id));
    expect(logged).toHaveLength(1);
  });

  it('answers a connection that never sends a byte with 408 within the idle limit', async () => {
    const answer = await sendRaw(edge.origin, '', 10_000);
    expectRawProblem(answer, 408, 'request-timeout');
  });

  it('answers headers that never end with 408 within the headers limit', async () => {
    const answer = await sendRaw(edge.origin, 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: yes\r\n', 10_000);
    expectRawProblem(answer, 408, 'request-timeout');
  });

  it('answers a body that never ends with 408 within the request limit', async () => {
    const answer = await sendRaw(
      edge.origin,
      'POST /openapi.json HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nabc',
      10_000,
    );
    // /openapi.json answers a POST at once (404); the request, though, times out on its missing body.
    expect([404, 408]).toContain(answer.status);
  });
});

describe('HEAD wherever GET is', () => {
  const reads = operations.filter((op) => op.method === 'GET');
  it.each(reads.map((operation) => ({ operation })))(
    'HEAD on $operation.operationId has the headers of GET and no body',
    async ({ operation }) => {
      const path = pathOf(operation, recordIdOf(operation));
      const get = await server.fetch(path, { headers: auth() });
      const head = await fetch(`${server.origin}${path}`, { method: 'HEAD', headers: auth() });
      expect(head.status).toBe(get.status);
      expect(await head.text()).toBe('');
      for (const name of ['content-type', 'content-length', 'cache-control', 'content-security-policy']) {
        expect(head.headers.get(name)).toBe(get.headers.get(name));
      }
    },
  );

  it.each(['/healthz', '/openapi.json', '/api/v1/spaces/123456789'])(
    'HEAD %s answers like GET, without a body',
    async (path) => {
      const get = await fetch(`${server.origin}${path}`, { headers: auth() });
      const head = await fetch(`${server.origin}${path}`, { method: 'HEAD', headers: auth() });
      expect(head.status).toBe(get.status);
      expect(head.headers.get('content-type')).toBe(get.headers.get('content-type'));
      expect(await head.text()).toBe('');
    },
  );

  it('lists HEAD in Allow next to GET', async () => {
    const response = await server.fetch('/api/v1/domains', { method: 'DELETE', headers: auth() });
    await expectProblem(response, 405);
    expect(response.headers.get('allow')).toBe('GET, HEAD, POST');
  });
});

describe('security headers on every answer', () => {
  const EXPECTED = {
    'content-security-policy': "default-src 'none';frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };

  it.each(['/healthz', '/readyz', '/openapi.json', '/nowhere', '/api/v1/domains', '/api/v1/spaces/123456789'])(
    '%s carries them',
    async (path) => {
      const response = await fetch(`${server.origin}${path}`, { headers: auth() });
      for (const [name, value] of Object.entries(EXPECTED)) expect(response.headers.get(name)).toBe(value);
      expect(response.headers.get('strict-transport-security')).toBeNull();
      expect(response.headers.get('x-powered-by')).toBeNull();
    },
  );

  it('keeps the docs page under its own Content-Security-Policy', async () => {
    const response = await fetch(`${server.origin}/docs`);
    // Built or not (503), the page's answer names its own policy.
    if (response.status === 200) {
      expect(response.headers.get('content-security-policy')).toMatch(/^default-src 'none'; script-src 'sha256-/);
    }
    expect(response.headers.get('x-frame-options')).toBe('DENY');
  });

  it('sends HSTS only when configured', async () => {
    const app = await createApp({ db: server.db, hstsMaxAgeSeconds: 31_536_000, validation: sharedValidation() });
    const http = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => http.once('listening', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(http.address() as AddressInfo).port}/healthz`);
      expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000');
    } finally {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });
});

describe('/readyz while draining', () => {
  it('answers 503 as a problem', async () => {
    const edge = await edgeServer(() => true);
    try {
      const response = await fetch(`${edge.origin}/readyz`);
      const body = await expectProblem(response, 503);
      expect(body.type).toBe(`${PROBLEM_TYPE_BASE}draining`);
    } finally {
      await edge.close();
    }
  });
});
