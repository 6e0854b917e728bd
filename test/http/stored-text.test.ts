// Text that cannot be stored is a 422 naming the field, on both engines, for every text field of every resource
// (PostgreSQL refuses NUL in text; an unpaired surrogate would come back changed from either engine); a body that
// is not what its Content-Encoding says is a 400 naming the header, before any 500, with no stack in the log.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/logger.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

const lines: string[] = [];
let server: TestServer;
let account: TestAccount;
let ids: { space: number; domain: number; endpoint: number };

beforeAll(async () => {
  server = await startServer({ logger: createLogger('info', (line) => lines.push(line)) });
  account = await server.account('stored-text');
  const space = await account.json.POST('/spaces', { body: { name: 'Text', color: 1 } });
  const domain = await account.json.POST('/domains', { body: { name: 'stored-text.example.com' } });
  const endpoint = await account.json.POST('/webhook-endpoints', {
    body: { url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] },
  });
  ids = { space: space.data?.data.id ?? 0, domain: domain.data?.data.id ?? 0, endpoint: endpoint.data?.data.id ?? 0 };
});
afterAll(() => server.close());

const send = (method: string, path: string, body: string, headers: Record<string, string> = {}) =>
  server.fetch(`/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${account.key}`, 'Content-Type': 'application/json', ...headers },
    body,
  });

/** Every text field of every resource's writes, with a body that is valid but for that field. */
const writes = () => [
  { method: 'POST', path: '/spaces', body: { name: 'x', color: 1 }, fields: ['name'] },
  { method: 'PATCH', path: `/spaces/${ids.space}`, body: {}, fields: ['name'] },
  { method: 'PUT', path: `/spaces/${ids.space}`, body: { color: 2 }, fields: ['name'] },
  {
    method: 'POST',
    path: '/domains',
    body: { name: 'nul.example.com' },
    fields: ['name', 'index_page', 'not_found_page'],
  },
  { method: 'PATCH', path: `/domains/${ids.domain}`, body: {}, fields: ['index_page', 'not_found_page'] },
  {
    method: 'POST',
    path: '/webhook-endpoints',
    body: { url: 'http://127.0.0.1:9/x', enabled_events: ['*'] },
    fields: ['url', 'description'],
  },
  { method: 'PATCH', path: `/webhook-endpoints/${ids.endpoint}`, body: {}, fields: ['url', 'description'] },
  { method: 'PUT', path: `/webhook-endpoints/${ids.endpoint}`, body: {}, fields: ['url', 'description'] },
];

const badValue = (field: string, bad: string) =>
  field === 'url' || field.endsWith('_page') ? `https://hooks.example.com/a${bad}b` : `a${bad}b`;

describe('text that cannot be stored', () => {
  it.each([
    ['NUL', '\u0000'],
    ['an unpaired surrogate', '\ud800'],
  ])('is a 422 naming the field, for %s in every text field', async (_, bad) => {
    for (const write of writes()) {
      for (const field of write.fields) {
        const body = { ...write.body, [field]: badValue(field, bad) };
        const response = await send(write.method, write.path, JSON.stringify(body));
        const problem = await expectProblem(response, 422);
        const named = (problem.errors as Array<{ field: string; location: string }>).map((e) => e.field);
        expect(named, `${write.method} ${write.path} ${field}`).toContain(field);
      }
    }
    const listed = await account.json.GET('/webhook-endpoints', {});
    expect(JSON.stringify(listed.data)).not.toMatch(/\\u0000|\\ud800/i);
  });

  it('is a 422 in a form too', async () => {
    const response = await send('POST', '/spaces', 'name=a%00b&color=1', {
      'Content-Type': 'application/x-www-form-urlencoded',
    });
    const problem = await expectProblem(response, 422);
    expect(problem.errors).toEqual([expect.objectContaining({ field: 'name', location: 'body' })]);
  });
});

describe('Content-Encoding', () => {
  const body = JSON.stringify({ name: 'Encoded', color: 3 });

  it.each(['gzip', 'deflate', 'br'])('%s that does not decompress is a 400 naming the header', async (enc) => {
    lines.length = 0;
    const response = await send('POST', '/spaces', body, { 'Content-Encoding': enc });
    const problem = await expectProblem(response, 400);
    expect(problem.type).toBe('/problems/malformed-body');
    expect(problem.detail).toContain('Content-Encoding');
    expect(lines.join('\n')).not.toMatch(/"stack"|\n\s+at /);
  });

  it.each([
    ['gzip', gzipSync],
    ['deflate', deflateSync],
    ['br', brotliCompressSync],
  ] as const)('%s that decompresses is read', async (enc, compress) => {
    const response = await server.fetch('/api/v1/spaces', {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${account.key}`,
        'Content-Type': 'application/json',
        'Content-Encoding': enc,
      },
      body: compress(Buffer.from(body)),
    });
    expect(response.status).toBe(201);
  });
});
