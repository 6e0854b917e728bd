// Notices about an account's endpoints, on the real app, its delivery job and real receivers: an endpoint that
// has failed for WEBHOOK_FAILING_NOTICE_S is announced once (`webhook_endpoint.failing`), one the service disables
// is announced with its reason (`webhook_endpoint.disabled`), both to the account's other endpoints that
// subscribe, never to the endpoint itself, and both are in the event log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scopesToReceive } from '../../server/events/read-scopes.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { payloadFindings } from '../support/webhook-payloads.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let server: TestServer;
let failing: Receiver;
let listener: Receiver;
let account: TestAccount;

beforeAll(async () => {
  server = await startServer({
    deliver: true,
    // Failing for 0.3 s is announced; failing for 2 s disables. Retries come every 0.2 s meanwhile.
    webhooks: {
      pollMs: 50,
      retryScheduleS: Array(40).fill(0.2),
      timeoutMs: 1000,
      failingNoticeMs: 300,
      disableAfterMs: 2000,
    },
  });
  failing = await startReceiver();
  listener = await startReceiver();
  account = await server.account();
});
afterAll(async () => {
  await server?.close();
  await failing?.close();
  await listener?.close();
});

describe('notices about endpoints', () => {
  it('announces a failing endpoint once and its disabling with the reason, to the other endpoints only', async () => {
    const created = await account.json.POST('/webhook-endpoints', {
      body: { url: failing.url, enabled_events: ['*'] },
    });
    const failingId = created.data?.data.id ?? 0;
    const other = await account.json.POST('/webhook-endpoints', {
      body: { url: listener.url, enabled_events: ['webhook_endpoint.disabled', 'webhook_endpoint.failing'] },
    });
    expect(other.response.status).toBe(201);
    failing.script(...Array(40).fill({ status: 500 }));
    await account.client.POST('/spaces', { body: { name: 'never-delivered' } });

    const heard = await listener.until((r) => r.length >= 2, 30_000);
    const notices = heard.map((r) => JSON.parse(r.body));
    expect(notices.map((n) => n.type)).toEqual(['webhook_endpoint.failing', 'webhook_endpoint.disabled']);
    for (const notice of notices) {
      expect(notice.data.object.id).toBe(failingId);
      expect(payloadFindings(notice)).toEqual([]);
    }
    expect(notices[1].data).toMatchObject({ disabled_reason: 'failing', object: { status: 'disabled' } });
    // Never to the endpoint the notices are about: it got only the space's attempts.
    expect(failing.received.map((r) => JSON.parse(r.body).type)).not.toContain('webhook_endpoint.failing');
    expect(failing.received.map((r) => JSON.parse(r.body).type)).not.toContain('webhook_endpoint.disabled');

    const logged = await account.client.GET('/events', { params: { query: { per_page: 10 } } });
    expect(logged.data?.data.map((e) => e.type)).toEqual([
      'webhook_endpoint.disabled',
      'webhook_endpoint.failing',
      'space.created',
    ]);
    // Once per failing period: no second failing notice arrived after the first.
    expect(listener.received.length).toBe(2);
  });

  it('are webhooks:read records: receiving them needs that scope', () => {
    expect(scopesToReceive(['webhook_endpoint.disabled', 'webhook_endpoint.failing'])).toEqual(['webhooks:read']);
  });
});
