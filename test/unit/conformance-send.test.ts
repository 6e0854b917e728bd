// The conformance runner's send (scripts/conformance/http.ts) against a server that closes a connection without
// answering, as a server does with a kept-alive connection at its idle timeout: a safe request is sent again once
// and gets its answer; an unsafe one is not sent twice, and reports that no answer came.
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { send } from '../../scripts/conformance/http.js';

let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

/** Closes the first `closing` connections as soon as a request arrives on them; answers 200 on the others. */
async function closingServer(closing: number): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  server = createServer((socket) => {
    socket.once('data', () => {
      requests++;
      if (requests <= closing) socket.destroy();
      else
        socket.end(
          'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        );
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/api/v1/spaces`, requests: () => requests };
}

describe("the runner's send", () => {
  it('sends a GET again once when the connection closed before any answer', async () => {
    const { url, requests } = await closingServer(1);
    const exchange = await send({ method: 'GET', url, headers: {} });
    expect(exchange.reply.status).toBe(200);
    expect(exchange.reply.json).toEqual({});
    expect(requests()).toBe(2);
  });

  it('reports no answer when the second try is closed too, without a third', async () => {
    const { url, requests } = await closingServer(2);
    const exchange = await send({ method: 'HEAD', url, headers: {} });
    expect(exchange.reply.status).toBe(0);
    expect(exchange.reply.error).toMatch(/fetch failed/);
    expect(requests()).toBe(2);
  });

  it('never sends a POST twice', async () => {
    const { url, requests } = await closingServer(1);
    const exchange = await send({ method: 'POST', url, headers: {}, body: 'name=x' });
    expect(exchange.reply.status).toBe(0);
    expect(requests()).toBe(1);
  });
});
