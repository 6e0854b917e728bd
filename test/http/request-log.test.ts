// The request log (http/pipeline/request-log.ts): one JSON line per request with the request id, method, full URL,
// status, duration, operation and account; credentials in headers redacted, whatever the key.
import { afterAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/logger.js';
import { secretOf } from '../support/api-keys.js';
import { sendRaw } from '../support/raw-http.js';
import { startServer } from '../support/server.js';

const lines: string[] = [];
const server = await startServer({ logger: createLogger('info', (line) => lines.push(line)) });
afterAll(() => server.close());
const alice = await server.account('alice');

type Line = Record<string, unknown> & { req?: Record<string, unknown>; res?: { statusCode?: number } };
const requestLines = (): Line[] =>
  lines.map((l) => JSON.parse(l) as Line).filter((l) => l.msg === 'request' && l.req !== undefined);

/** The request line of the request that carried this X-Request-Id (it is written once the answer is sent). */
async function lineOf(id: string): Promise<Line> {
  for (let i = 0; i < 100; i++) {
    const found = requestLines().find((l) => l.request_id === id);
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`no request line for ${id} in:\n${lines.join('\n')}`);
}

describe('request log', () => {
  it('has one line per request with the id, method, full URL, status, duration, operation and account', async () => {
    const response = await fetch(`${server.apiUrl}/domains?search=shop&sort=desc`, {
      headers: { Authorization: `Bearer ${alice.key}`, 'X-Request-Id': 'log-list-1' },
    });
    expect(response.status).toBe(200);
    const line = await lineOf('log-list-1');
    expect(line).toMatchObject({
      level: 'info',
      msg: 'request',
      request_id: 'log-list-1',
      req: { method: 'GET', url: '/api/v1/domains?search=shop&sort=desc' },
      res: { statusCode: 200 },
      operation_id: 'domains_list',
    });
    expect(typeof line.account_id).toBe('number');
    expect(line.duration_ms).toBeGreaterThanOrEqual(0);
    expect(requestLines().filter((l) => l.request_id === 'log-list-1')).toHaveLength(1);
  });

  it('uses the id the response carries when the client sends none', async () => {
    const response = await fetch(`${server.origin}/openapi.json`);
    const id = response.headers.get('x-request-id') as string;
    expect((await lineOf(id)).res?.statusCode).toBe(200);
  });

  it('logs passing health checks at debug only, and failing ones at warn', async () => {
    const logged: string[] = [];
    let draining = false;
    const checked = await startServer({
      logger: createLogger('debug', (line) => logged.push(line)),
      isDraining: () => draining,
    });
    try {
      const levelOf = async (path: string, status: number) => {
        const response = await fetch(`${checked.origin}${path}`);
        expect(response.status).toBe(status);
        const id = response.headers.get('x-request-id');
        await expect
          .poll(() => logged.map((l) => JSON.parse(l) as Line).find((l) => l.request_id === id && l.msg === 'request'))
          .toBeDefined();
        return logged.map((l) => JSON.parse(l) as Line).find((l) => l.request_id === id)?.level;
      };
      expect(await levelOf('/healthz', 200)).toBe('debug');
      expect(await levelOf('/readyz', 200)).toBe('debug');
      expect(await levelOf('/readyz?verbose=1', 200)).toBe('debug');
      draining = true;
      expect(await levelOf('/readyz', 503)).toBe('warn');
      expect(await levelOf('/api/v1/nowhere', 404)).toBe('info');
    } finally {
      await checked.close();
    }
    // At the default level (info), a passing check writes nothing.
    const before = lines.length;
    expect((await fetch(`${server.origin}/readyz`)).status).toBe(200);
    const id = `after-${Date.now()}`;
    await fetch(`${server.origin}/openapi.json`, { headers: { 'X-Request-Id': id } });
    await lineOf(id);
    expect(lines.slice(before).filter((l) => l.includes('/readyz'))).toEqual([]);
  });

  const TOKENS = [
    { what: 'a valid key', token: () => alice.key },
    { what: 'a wrong key', token: () => `${alice.key.slice(0, -6)}AAAAAA` },
    { what: 'a malformed token', token: () => 'not-a-key-at-all-secret' },
  ];

  it.each(TOKENS)('redacts the Authorization header carrying $what', async ({ token }) => {
    const id = `log-auth-${Math.random().toString(36).slice(2)}`;
    await fetch(`${server.apiUrl}/spaces`, {
      headers: { Authorization: `Bearer ${token()}`, Cookie: 'session=cookie-secret', 'X-Request-Id': id },
    });
    const line = await lineOf(id);
    const headers = (line.req?.headers ?? {}) as Record<string, string>;
    expect(headers.authorization).toBe('[Redacted]');
    expect(headers.cookie).toBe('[Redacted]');
    const all = lines.join('\n');
    expect(all).not.toContain(token());
    expect(all).not.toContain(secretOf(alice.key));
    expect(all).not.toContain('cookie-secret');
  });

  it.each([
    ['a 14 KB header of quotes and bytes >= 0x80', '/api/v1/domains', `X-Junk: ${'"\u00ff'.repeat(4_700)}\r\n`],
    ['an 8 KB path', `/api/v1/${'a'.repeat(8_000)}`, ''],
  ])('keeps the line of an unauthenticated request with %s to a few KB', async (_, path, header) => {
    const id = `log-bounded-${path.length}`;
    const answer = await sendRaw(
      server.origin,
      `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Request-Id: ${id}\r\n${header}Connection: close\r\n\r\n`,
    );
    expect(answer.status).toBeGreaterThanOrEqual(400);
    await lineOf(id);
    const line = lines.find((text) => text.includes(`"request_id":"${id}"`)) as string;
    expect(Buffer.byteLength(line)).toBeLessThan(4_096);
  });

  it('labels an unmatched path with no operation and its 404', async () => {
    await fetch(`${server.origin}/api/v1/nothing-here`, { headers: { 'X-Request-Id': 'log-404' } });
    const line = await lineOf('log-404');
    expect(line.res?.statusCode).toBe(404);
    expect(line.operation_id).toBeUndefined();
  });
});
