// What the delivery log keeps of a receiver's answer, and the delivery rules around it, on the engine under test:
// a body with NUL bytes or invalid UTF-8 is stored (PostgreSQL refuses 0x00 in text), a status outside 100-599 is
// an error, a delivery cancelled while in flight stays cancelled, an oversized payload fails at once, and forced
// deliveries (a test, a redelivery by name) count against the queue limit.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** A receiver that answers every request with `status` and the raw bytes `body`. */
async function startRawReceiver(status: number, body: Buffer): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, { 'content-type': 'application/octet-stream' });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/raw`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function endpointFor(account: TestAccount, url: string): Promise<number> {
  const { data, error } = await account.json.POST('/webhook-endpoints', { body: { url, enabled_events: ['*'] } });
  expect(error).toBeUndefined();
  return data?.data.id ?? 0;
}

async function attemptsOf(account: TestAccount, id: number, atLeast: number) {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { data } = await account.client.GET('/webhook-endpoints/{id}/deliveries', {
      params: { path: { id }, query: { per_page: 50 } },
    });
    const attempts = data?.data ?? [];
    if (attempts.length >= atLeast) return attempts;
    if (Date.now() > deadline) throw new Error(`endpoint ${id} has ${attempts.length} attempts, not ${atLeast}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const deliveryStates = async (server: TestServer, endpointId: number) =>
  (
    await server.db
      .selectFrom('webhook_deliveries')
      .select('state')
      .where('endpoint_id', '=', endpointId)
      .orderBy('id')
      .execute()
  ).map((row) => row.state);

describe('answers and deliveries', () => {
  let server: TestServer;
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    server = await startServer({
      deliver: true,
      webhooks: { retryScheduleS: [0.2, 0.2], timeoutMs: 3_000, maxPayloadBytes: 1024 },
    });
  });
  afterAll(async () => {
    await server?.close();
    for (const close of closers) await close();
  });

  it('stores a body with NUL bytes and invalid UTF-8, and a 200 with it acknowledges the delivery once', async () => {
    const receiver = await startRawReceiver(200, Buffer.from([0x6f, 0x6b, 0x00, 0xff, 0xfe, 0x21, 0x00]));
    closers.push(receiver.close);
    const account = await server.account();
    const id = await endpointFor(account, receiver.url);
    await account.client.POST('/spaces', { body: { name: 'binary answer' } });
    const [attempt] = await attemptsOf(account, id, 1);
    expect(attempt).toMatchObject({ status: 'succeeded', response_status: 200, next_attempt_at: null });
    expect(attempt?.response_body).toBe('ok\uFFFD\uFFFD\uFFFD!\uFFFD');
    expect(await deliveryStates(server, id)).toEqual(['succeeded']);
  });

  it('takes a status outside 100-599 for an error, not a status', async () => {
    const receiver = await startRawReceiver(999, Buffer.from('odd'));
    closers.push(receiver.close);
    const account = await server.account();
    const id = await endpointFor(account, receiver.url);
    await account.client.POST('/spaces', { body: { name: 'odd status' } });
    const [attempt] = await attemptsOf(account, id, 1);
    expect(attempt).toMatchObject({ status: 'failed', response_status: null });
    expect(attempt?.error).toMatch(/status 999 is outside 100-599/);
  });

  it('leaves a delivery cancelled while its attempt was under way cancelled', async () => {
    const receiver: Receiver = await startReceiver();
    closers.push(receiver.close);
    // The first delivery hangs a moment and fails; the second answers 410 meanwhile, which disables the endpoint
    // and cancels its queue, the first delivery among it.
    receiver.script({ delayMs: 1_000, status: 500 }, { status: 410 });
    const account = await server.account();
    const id = await endpointFor(account, receiver.url);
    await account.client.POST('/spaces', { body: { name: 'first' } });
    await receiver.until((r) => r.length >= 1);
    await account.client.POST('/spaces', { body: { name: 'second' } });
    const attempts = await attemptsOf(account, id, 2);
    expect(attempts.map((attempt) => attempt.response_status).sort()).toEqual([410, 500]);
    expect(await deliveryStates(server, id)).toEqual(['cancelled', 'failed']);
    const { data } = await account.client.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
    expect(data?.data).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
  });

  it('fails a payload over WEBHOOK_MAX_PAYLOAD_BYTES at once, without retries', async () => {
    const receiver: Receiver = await startReceiver();
    closers.push(receiver.close);
    const account = await server.account();
    const id = await endpointFor(account, receiver.url);
    const stored = await account.json.POST('/domains', {
      body: { name: 'large-payload.example.com', index_page: `https://large-payload.example.com/${'p'.repeat(1500)}` },
    });
    expect(stored.response.status).toBe(201);
    const [attempt] = await attemptsOf(account, id, 1);
    expect(attempt).toMatchObject({ status: 'failed', response_status: null, next_attempt_at: null });
    expect(attempt?.error).toMatch(/over the limit of 1024/);
    expect(await deliveryStates(server, id)).toEqual(['failed']);
    expect(receiver.received).toHaveLength(0);
  });
});

describe('forced deliveries and the queue limit', () => {
  let server: TestServer;
  let account: TestAccount;
  let id: number;

  beforeAll(async () => {
    // No job runs: what is queued stays queued.
    server = await startServer({ webhooks: { maxQueuePerEndpoint: 2 } });
    account = await server.account();
    id = await endpointFor(account, 'http://127.0.0.1:9/never');
    await account.client.PATCH('/webhook-endpoints/{id}', { params: { path: { id } }, body: { status: 'disabled' } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('queues tests to a disabled endpoint up to WEBHOOK_MAX_QUEUE, then answers 409 and keeps no event', async () => {
    for (let i = 0; i < 2; i++) {
      const { response } = await account.client.POST('/webhook-endpoints/{id}/test', { params: { path: { id } } });
      expect(response.status).toBe(202);
    }
    const refused = await account.client.POST('/webhook-endpoints/{id}/test', { params: { path: { id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ type: '/problems/webhook-queue-full' });
    expect(await deliveryStates(server, id)).toEqual(['pending', 'pending']);
    const events = await account.client.GET('/events', { params: { query: { type: 'webhook.test', per_page: 10 } } });
    expect(events.data?.data).toHaveLength(2);
  });

  it('answers 409 to a redelivery to that endpoint by name', async () => {
    // A change while the endpoint is disabled: its event is logged and queued nowhere.
    await account.client.POST('/spaces', { body: { name: 'missed' } });
    const events = await account.client.GET('/events', { params: { query: { type: 'space.created', per_page: 10 } } });
    expect(events.error).toBeUndefined();
    const eventId = events.data?.data[0]?.id ?? '';
    expect(eventId).toMatch(/^evt_/);
    const refused = await account.json.POST('/events/{id}/redeliver', {
      params: { path: { id: eventId } },
      body: { endpoint_id: id },
    });
    expect(refused.error).toMatchObject({ type: '/problems/webhook-queue-full', detail: expect.any(String) });
    expect(refused.response.status).toBe(409);
    expect(await deliveryStates(server, id)).toEqual(['pending', 'pending']);
  });
});
