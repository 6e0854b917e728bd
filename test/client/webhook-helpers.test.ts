// The client's webhook endpoint and event helpers against the real server and a real receiver, with the client's
// defaults (form bodies elsewhere): they send JSON, which these operations take only, and so does the raw client:
// `client.raw.POST('/webhook-endpoints', …)` creates an endpoint. A delivery they trigger verifies synchronously.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient, type DomainSpaceClient, verifyWebhook } from '../../client/src/index.js';
import { startServer, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { type RecordingFetch, recordingFetch } from './recording-fetch.js';

let server: TestServer;
let receiver: Receiver;
let client: DomainSpaceClient;
let sent: RecordingFetch;

beforeAll(async () => {
  server = await startServer({ deliver: true, webhooks: { pollMs: 50, timeoutMs: 1000 } });
  receiver = await startReceiver();
  const { key } = await server.account('client-webhooks');
  sent = recordingFetch();
  client = createClient({ baseUrl: server.apiUrl, apiKey: key, fetch: sent.fetch });
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

describe('the raw client with its defaults', () => {
  it('creates a webhook endpoint, sending JSON', async () => {
    const { data, error, response } = await client.raw.POST('/webhook-endpoints', {
      body: { url: receiver.url, enabled_events: ['space.created'] },
    });
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    expect(data?.secret).toMatch(/^whsec_/);
    expect(sent.requests.at(-1)?.headers.get('Content-Type')).toBe('application/json');
  });

  it('still sends forms where the operation takes them', async () => {
    const { response } = await client.raw.POST('/spaces', { body: { name: 'Form', color: 2 } });
    expect(response.status).toBe(201);
    expect(sent.requests.at(-1)?.headers.get('Content-Type')).toBe('application/x-www-form-urlencoded');
  });
});

describe('webhookEndpoints and events', () => {
  it('create, get, update, listAll, rotateSecret, test, deliveries, delete', async () => {
    const created = await client.webhookEndpoints.create({ url: receiver.url, enabled_events: ['*'] });
    expect(created.secret).toMatch(/^whsec_/);
    expect(created.enabled_events).toEqual(['*']);
    expect((await client.webhookEndpoints.get(created.id)).url).toBe(receiver.url);
    const updated = await client.webhookEndpoints.update(created.id, { description: 'From the client' });
    expect(updated.description).toBe('From the client');
    const all = [];
    for await (const endpoint of client.webhookEndpoints.listAll()) all.push(endpoint.id);
    expect(all).toContain(created.id);

    const rotated = await client.webhookEndpoints.rotateSecret(created.id);
    expect(rotated.secret).not.toBe(created.secret);

    const before = receiver.received.length;
    const event = await client.webhookEndpoints.test(created.id);
    expect(event.type).toBe('webhook.test');
    await receiver.until((received) => received.length > before);
    const delivery = receiver.received.at(-1);
    const verified = verifyWebhook(rotated.secret, delivery?.body ?? '', delivery?.headers as Record<string, string>);
    expect(verified.id).toBe(event.id);

    // The attempt is logged once the receiver's answer is in: waited for, within a bound.
    await vi.waitFor(
      async () => {
        const attempts = [];
        for await (const attempt of client.webhookEndpoints.deliveries(created.id, { per_page: 10 })) {
          attempts.push(attempt);
        }
        expect(attempts.map((attempt) => attempt.status)).toContain('succeeded');
      },
      { timeout: 10_000, interval: 100 },
    );

    await client.webhookEndpoints.delete(created.id);
    await expect(client.webhookEndpoints.get(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it('lists events and redelivers one', async () => {
    const endpoint = await client.webhookEndpoints.create({ url: receiver.url, enabled_events: ['space.created'] });
    await client.spaces.create({ name: 'Evented', color: 1 });
    const page = await client.events.list({ type: 'space.created', per_page: 10 });
    const first = page.data[0];
    expect(first?.type).toBe('space.created');
    const walked = [];
    for await (const event of client.events.listAll({ per_page: 10 })) walked.push(event.id);
    expect(walked).toContain(first?.id);
    const redelivery = await client.events.redeliver(first?.id ?? '', endpoint.id);
    expect(redelivery).toEqual({ event_id: first?.id, endpoint_ids: [endpoint.id] });
    expect(sent.requests.at(-1)?.headers.get('Content-Type')).toBe('application/json');
  });

  it('recovers an endpoint since a time and follows the recovery', async () => {
    const endpoint = await client.webhookEndpoints.create({
      url: receiver.url,
      enabled_events: ['space.created'],
      rate_limit: 50,
      headers: { 'X-Gateway-Key': 'from-the-client' },
    });
    expect(endpoint).toMatchObject({ rate_limit: 50, headers: { 'X-Gateway-Key': 'from-the-client' } });
    const since = new Date(Date.now() - 60_000).toISOString();
    const started = await client.webhookEndpoints.recover(endpoint.id, { since });
    expect(started).toMatchObject({ endpoint_id: endpoint.id, since, status: 'running' });
    expect(sent.requests.at(-1)?.headers.get('Idempotency-Key')).toBeTruthy();
    let recovery = started;
    for (let i = 0; i < 200 && recovery.status === 'running'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      recovery = await client.webhookEndpoints.recovery(endpoint.id, started.id);
    }
    expect(recovery.status).toBe('completed');
    const listed = [];
    for await (const one of client.webhookEndpoints.recoveries(endpoint.id)) listed.push(one.id);
    expect(listed).toEqual([started.id]);
  });

  it('lists the event types with their schemas', async () => {
    const types = await client.events.eventTypes();
    expect(types.map((t) => t.type)).toContain('webhook_endpoint.disabled');
    expect(types.find((t) => t.type === 'space.created')).toMatchObject({ read_scope: 'spaces:read' });
  });
});
