// PostgreSQL out of reach, through a TCP relay of the test's own between the service and the server: first down
// (every connection cut and new ones refused, as a stopped server or a closed port), then silent (connections
// stay open but nothing comes back, as in a network partition or a frozen host), each time back again. The
// process never crashes or hangs: requests are 503 database-unavailable or database-timeout with Retry-After within
// the configured limits, /readyz answers 503 within 1 s, /healthz stays 200, the pool heals by itself once the
// server answers, and no acknowledged write is lost. Runs in the PostgreSQL leg of the suite.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../service/process.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { form, type Service, send, servedAgain, startService } from './support.js';

/** A TCP relay to PostgreSQL that can be cut, silenced and opened again. */
class Relay {
  mode: 'open' | 'down' | 'silent' = 'open';
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly target: { host: string; port: number },
    public port = 0,
  ) {}

  async open(): Promise<void> {
    this.mode = 'open';
    if (this.server) return;
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  /** Cuts every connection and refuses new ones. */
  async down(): Promise<void> {
    this.mode = 'down';
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps every connection open but passes nothing on, either way; new connections get nothing either. */
  silence(): void {
    this.mode = 'silent';
  }

  private accept(client: Socket): void {
    const server = connect(this.target);
    for (const [from, to] of [
      [client, server],
      [server, client],
    ] as const) {
      this.sockets.add(from);
      from.on('data', (chunk) => {
        if (this.mode === 'open') to.write(chunk);
      });
      from.on('error', () => to.destroy());
      from.on('close', () => {
        this.sockets.delete(from);
        to.destroy();
      });
    }
  }

  async close(): Promise<void> {
    await this.down();
  }
}

let database: TestDatabase & { name: string };
let relay: Relay;
let service: Service;

beforeAll(async () => {
  database = await freshPostgresDatabase();
  const url = new URL(database.url);
  relay = new Relay({ host: url.hostname, port: Number(url.port || 5432) });
  await relay.open();
  url.hostname = '127.0.0.1';
  url.port = String(relay.port);
  service = await startService({ DATABASE_URL: url.toString() });
}, 150_000);

afterAll(async () => {
  await stopAll();
  await relay?.close();
  await database?.drop();
});

const auth = () => ({ Authorization: `Bearer ${service.key}` });
const list = () => send(`${service.origin}/api/v1/spaces?per_page=100`, { headers: auth() });
const create = (name: string) =>
  send(`${service.origin}/api/v1/spaces`, { method: 'POST', headers: form(service.key), body: `name=${name}` });

/** What every request meets while the server is out of reach, and what the probes say. */
async function expectOutOfReach(kinds: string[]): Promise<void> {
  // The default limits: 2 s for a connection, 5 s for a statement (and 1 s more for a silent server).
  for (const answer of [await list(), await create('refused')]) {
    expect(answer.status).toBe(503);
    expect(kinds).toContain(answer.type);
    expect(answer.retryAfter).toMatch(/^\d+$/);
    expect(answer.ms).toBeLessThan(15_000);
  }
  const ready = await send(`${service.origin}/readyz`);
  expect(ready.status).toBe(503);
  expect(ready.ms).toBeLessThan(1_000);
  expect((await send(`${service.origin}/healthz`)).status).toBe(200);
}

describe('PostgreSQL out of reach', { timeout: 120_000 }, () => {
  const acknowledged: number[] = [];
  const store = async (name: string) => {
    const created = await servedAgain(() => create(name), 201, 10_000);
    acknowledged.push((created.body as { data: { id: number } }).data.id);
  };

  it('down (connections cut, new ones refused): 503 within the limits, and served again once it is back', async () => {
    await store('before-down');
    await relay.down();
    await expectOutOfReach(['/problems/database-unavailable', '/problems/database-timeout']);
    await relay.open();
    await servedAgain(list, 200, 10_000);
    await servedAgain(() => send(`${service.origin}/readyz`), 200, 10_000);
    await store('after-down');
  });

  it('silent (a partition: nothing comes back): 503 within the limits, never a hang, and served again', async () => {
    await store('before-silence');
    relay.silence();
    await expectOutOfReach(['/problems/database-unavailable', '/problems/database-timeout']);
    // Connections that went silent are given up, not reused: once the server answers, requests are served.
    await relay.open();
    await servedAgain(list, 200, 15_000);
    await servedAgain(() => send(`${service.origin}/readyz`), 200, 15_000);
    await store('after-silence');
  });

  it('kept every acknowledged write, and the process still runs', async () => {
    const ids = ((await list()).body as { data: { id: number }[] }).data.map((space) => space.id);
    expect(acknowledged.filter((id) => !ids.includes(id))).toEqual([]);
    expect(acknowledged).toHaveLength(4);
    expect(service.server.child.exitCode).toBeNull();
  });
});
