// A local HTTP server (node:http, port 0) that answers with a script of responses, one per request, for the
// client's retry, timeout and error tests: what the real service does not do on demand (429, 503, no answer).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { type ClientOptions, createClient } from '../../client/src/index.js';

export type Answer =
  | { status: number; headers?: Record<string, string>; body?: unknown }
  /** Never answers (until the server closes). */
  | 'hang';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  /** performance.now() when the request arrived. */
  at: number;
}

export interface ScriptedServer {
  url: string;
  requests: ReceivedRequest[];
  /** Resolves when the nth request (1-based) has arrived. */
  received(count: number): Promise<void>;
  close(): Promise<void>;
}

/** Answers the script in order; the last answer repeats for any further request. */
export async function startScriptedServer(script: Answer[]): Promise<ScriptedServer> {
  const requests: ReceivedRequest[] = [];
  const waiting: { count: number; resolve: () => void }[] = [];
  const server = createServer((request, response) => {
    requests.push({
      method: request.method ?? '',
      url: request.url ?? '',
      headers: request.headers,
      at: performance.now(),
    });
    for (const waiter of waiting.filter((w) => w.count <= requests.length)) waiter.resolve();
    const answer = script[Math.min(requests.length, script.length) - 1];
    request.resume();
    if (answer === undefined || answer === 'hang') return;
    const body =
      answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
    const contentType = typeof answer.body === 'string' ? 'text/html' : 'application/json';
    response.writeHead(answer.status, { ...(body ? { 'Content-Type': contentType } : {}), ...answer.headers });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    received(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiting.push({ count, resolve }));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A problem body like the service's, for scripted error answers. */
export function problem(status: number, title: string, detail = title) {
  return { type: 'about:blank', title, status, detail, request_id: `scripted-${status}` };
}

export const domainBody = {
  data: {
    id: 1,
    name: 'shop.example',
    index_page: null,
    not_found_page: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  },
};

/** For a test file: makes a client on a fresh scripted server per call; the server closes after each test. */
export function scriptedClients() {
  let server: ScriptedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (script: Answer[], options: Partial<ClientOptions> = {}) => {
    server = await startScriptedServer(script);
    return { api: createClient({ baseUrl: server.url, apiKey: 'key', ...options }), server };
  };
}
