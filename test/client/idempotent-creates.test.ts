// The client's create against the real server behind a faulty proxy that lets the first POST through, waits
// for the server's whole answer (the record is committed) and then drops the connection without answering:
// the client retries with the same Idempotency-Key and gets the saved 201; exactly one record exists.
import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createClient, NetworkError } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';

interface Seen {
  method: string;
  key: string | undefined;
  status: number;
  replayed: string | undefined;
  dropped: boolean;
}

/** A proxy in front of `target` that drops the answer to the first `dropFirst` POSTs after reading it in full. */
async function droppingProxy(target: string, dropFirst = 1) {
  const seen: Seen[] = [];
  let posts = 0;
  const proxy = createServer((req, res) => {
    const drop = req.method === 'POST' && ++posts <= dropFirst;
    const upstream = forward(
      `${target}${req.url}`,
      { method: req.method, headers: req.headers as IncomingHttpHeaders },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          seen.push({
            method: req.method ?? '',
            key: req.headers['idempotency-key'] as string | undefined,
            status: answer.statusCode ?? 0,
            replayed: answer.headers['idempotent-replayed'] as string | undefined,
            dropped: drop,
          });
          // The server has answered, so it has committed: the client never hears of it.
          if (drop) return req.socket.destroy();
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          res.end(Buffer.concat(chunks));
        });
      },
    );
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    seen,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
    },
  };
}

let server: TestServer;
let key: string;
beforeAll(async () => {
  server = await startServer();
  ({ key } = await server.account());
});
afterAll(() => server.close());

async function stored(table: 'domains' | 'spaces', name: string): Promise<number> {
  return (await server.db.selectFrom(table).select('id').where('name', '=', name).execute()).length;
}

describe('a create whose answer is lost after the server committed', () => {
  test.each(['form', 'json'] as const)('is retried and creates exactly one space (%s body)', async (bodyEncoding) => {
    const proxy = await droppingProxy(server.origin);
    try {
      const api = createClient({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, bodyEncoding, maxRetryDelayMs: 100 });
      const name = `Dropped once ${bodyEncoding}`;
      const space = await api.spaces.create({ name, color: 4 });
      expect(space).toMatchObject({ name, color: 4 });
      expect(await stored('spaces', name)).toBe(1);
      expect(proxy.seen).toEqual([
        { method: 'POST', key: expect.any(String), status: 201, replayed: undefined, dropped: true },
        { method: 'POST', key: proxy.seen[0]?.key, status: 201, replayed: 'true', dropped: false },
      ]);
    } finally {
      await proxy.close();
    }
  });

  test('creates exactly one domain even when two answers in a row are lost', async () => {
    const proxy = await droppingProxy(server.origin, 2);
    try {
      const api = createClient({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, maxRetryDelayMs: 100 });
      const domain = await api.domains.create({ name: 'dropped-twice.example.com' });
      expect(domain.name).toBe('dropped-twice.example.com');
      expect(await stored('domains', 'dropped-twice.example.com')).toBe(1);
      expect(proxy.seen.map((s) => [s.status, s.replayed ?? '-', s.dropped])).toEqual([
        [201, '-', true],
        [201, 'true', true],
        [201, 'true', false],
      ]);
    } finally {
      await proxy.close();
    }
  });

  test('without an Idempotency-Key is not retried: the caller gets a NetworkError, the record exists', async () => {
    const proxy = await droppingProxy(server.origin);
    try {
      const api = createClient({ baseUrl: `${proxy.url}/api/v1`, apiKey: key, idempotencyKeys: false });
      const name = 'Dropped without a key';
      await expect(api.spaces.create({ name })).rejects.toBeInstanceOf(NetworkError);
      expect(proxy.seen).toHaveLength(1);
      expect(await stored('spaces', name)).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});
