// Webhook delivery end to end on the real app and a real receiver: every change of a domain or a space is
// delivered once, signed so that the standardwebhooks package verifies it, with a payload the spec's `webhooks`
// section describes; failures are retried, 410 disables, a rotated secret signs beside the new one.

import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { noTarget } from '../../server/domains/routing-rules.js';
import { NO_TARGETS } from '../../server/domains/routing-targets.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { payloadFindings } from '../support/webhook-payloads.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let server: TestServer;
let receiver: Receiver;
let account: TestAccount;
let secret: string;
let endpointId: number;

beforeAll(async () => {
  server = await startServer({
    deliver: true,
    webhooks: { pollMs: 50, retryScheduleS: [0.2, 0.2, 0.2, 0.2, 0.2], timeoutMs: 1000 },
  });
  receiver = await startReceiver();
  account = await server.account();
  const { data, error } = await account.json.POST('/webhook-endpoints', {
    body: { url: receiver.url, enabled_events: ['*'] },
  });
  expect(error).toBeUndefined();
  secret = data?.secret ?? '';
  endpointId = data?.data.id ?? 0;
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

const verified = (at: number, key = secret) => {
  const { headers, body } = receiver.received[at] ?? { headers: {} as Record<string, string>, body: '' };
  return new Webhook(key).verify(body, {
    'webhook-id': String(headers['webhook-id']),
    'webhook-timestamp': String(headers['webhook-timestamp']),
    'webhook-signature': String(headers['webhook-signature']),
  }) as { id: string; type: string; data: { object: { id: number } } };
};

describe('delivery of changes', () => {
  it('delivers create, update and delete once each, signed and as the spec describes them', async () => {
    const before = receiver.received.length;
    const created = await account.client.POST('/spaces', { body: { name: 'Hooked', color: 2 } });
    const id = created.data?.data.id ?? 0;
    await account.client.PATCH('/spaces/{id}', { params: { path: { id } }, body: { color: 4 } });
    // Nothing changes: no event.
    await account.client.PATCH('/spaces/{id}', { params: { path: { id } }, body: { color: 4 } });
    await account.client.DELETE('/spaces/{id}', { params: { path: { id } } });
    await receiver.until((r) => r.length >= before + 3);
    // Once each: a late duplicate (a retry comes 0.2 s after an attempt here) would arrive within the quiet period.
    await receiver.quiet(1_000);
    const types = receiver.received.slice(before).map((_, i) => verified(before + i).type);
    expect(types).toEqual(['space.created', 'space.updated', 'space.deleted']);
    for (let i = before; i < receiver.received.length; i++) {
      expect(payloadFindings(JSON.parse(receiver.received[i]?.body ?? ''))).toEqual([]);
    }
    const events = await account.client.GET('/events', { params: { query: { per_page: 10 } } });
    expect(events.data?.data.map((event) => event.type).slice(0, 3)).toEqual([
      'space.deleted',
      'space.updated',
      'space.created',
    ]);
  });
});

describe('retries', () => {
  it('retries after 500, a 429 with Retry-After, a timeout and a slow body, then stops at the 200', async () => {
    const before = receiver.received.length;
    receiver.script(
      { status: 500, body: 'boom' },
      { status: 429, headers: { 'retry-after': '1' } },
      { delayMs: 1500 },
      // Its 200 arrives at once, its body too slowly: only a whole answer within the limit counts.
      { slowBody: { pieces: 30, everyMs: 50 } },
    );
    const created = await account.client.POST('/spaces', { body: { name: 'Retried' } });
    expect(created.response.status).toBe(201);
    const all = await receiver.until((r) => r.length >= before + 5);
    const mine = all.slice(before);
    // The same event every time: one webhook-id, five attempts, each signed afresh.
    expect(new Set(mine.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (let i = before; i < all.length; i++) expect(verified(i).type).toBe('space.created');
    // Retry-After: 1 was honoured: the attempt after the 429 came at least a second later.
    expect((mine[2]?.at ?? 0) - (mine[1]?.at ?? 0)).toBeGreaterThanOrEqual(950);
    // The receiver has the fifth attempt as the service records it: read the log once it holds all five.
    const attemptsOf = async () => {
      const log = await account.client.GET('/webhook-endpoints/{id}/deliveries', {
        params: { path: { id: endpointId }, query: { per_page: 10 } },
      });
      return (log.data?.data ?? []).filter((a) => a.event_id === mine[0]?.headers['webhook-id']);
    };
    await expect.poll(async () => (await attemptsOf()).at(0)?.attempt).toBe(5);
    const attempts = await attemptsOf();
    expect(attempts.map((a) => [a.attempt, a.status, a.response_status])).toEqual([
      [5, 'succeeded', 200],
      [4, 'failed', null],
      [3, 'failed', null],
      [2, 'failed', 429],
      [1, 'failed', 500],
    ]);
    expect(attempts[3]?.error).toBeNull();
    expect(attempts[2]?.error).toMatch(/timeout/);
    expect(attempts[4]?.response_body).toBe('boom');
    expect(attempts[0]?.next_attempt_at).toBeNull();
    expect(attempts[4]?.next_attempt_at).not.toBeNull();
  }, 30_000);
});

describe('secret rotation', () => {
  it('signs with the new and the previous secret during the overlap', async () => {
    const rotated = await account.client.POST('/webhook-endpoints/{id}/rotate-secret', {
      params: { path: { id: endpointId } },
    });
    const fresh = rotated.data?.secret ?? '';
    expect(fresh).not.toBe(secret);
    expect(rotated.data?.data.secret_rotated_at).not.toBeNull();
    const before = receiver.received.length;
    await account.client.POST('/spaces', { body: { name: 'Rotated' } });
    await receiver.until((r) => r.length > before);
    expect(verified(before, fresh).type).toBe('space.created');
    expect(verified(before, secret).type).toBe('space.created');
    expect(String(receiver.received[before]?.headers['webhook-signature']).split(' ')).toHaveLength(2);
    secret = fresh;
  });
});

describe('410 Gone', () => {
  it('disables the endpoint, with the reason, and sends nothing more to it', async () => {
    const gone = await startReceiver();
    try {
      const made = await account.json.POST('/webhook-endpoints', {
        body: { url: gone.url, enabled_events: ['domain.created'] },
      });
      const id = made.data?.data.id ?? 0;
      gone.script({ status: 410 });
      await account.client.POST('/domains', { body: { name: 'gone-test.example.com' } });
      await gone.until((r) => r.length >= 1);
      let shown = await account.client.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
      for (let i = 0; i < 100 && shown.data?.data.status !== 'disabled'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        shown = await account.client.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
      }
      expect(shown.data?.data).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
      // A later event is not queued for it; the other endpoint (all types) still gets it.
      const before = receiver.received.length;
      await account.client.POST('/domains', { body: { name: 'gone-test-2.example.com' } });
      await receiver.until((r) => r.length > before);
      expect(gone.received).toHaveLength(1);
    } finally {
      await gone.close();
    }
  });
});

describe('the event log', () => {
  it('lists by type, newest first, by cursor, and redelivers with the same webhook-id', async () => {
    const first = await account.client.GET('/events', { params: { query: { type: 'space.created', per_page: 10 } } });
    const events = first.data?.data ?? [];
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events.every((event) => event.type === 'space.created')).toBe(true);
    for (const event of events) expect(payloadFindings(event)).toEqual([]);
    const before = receiver.received.length;
    const target = events[0]?.id ?? '';
    const redelivered = await account.json.POST('/events/{id}/redeliver', { params: { path: { id: target } } });
    expect(redelivered.response.status).toBe(202);
    expect(redelivered.data?.data.endpoint_ids).toEqual([endpointId]);
    await receiver.until((r) => r.length > before);
    expect(receiver.received[before]?.headers['webhook-id']).toBe(target);
  });

  it('refuses a cursor the service did not make as invalid-cursor, naming after', async () => {
    const { error, response } = await account.client.GET('/events', { params: { query: { after: 'AAAA' } } });
    expect(response.status).toBe(422);
    expect(error).toMatchObject({ type: '/problems/invalid-cursor', errors: [{ location: 'query', field: 'after' }] });
  });

  it('answers 404 for an event of another account', async () => {
    const other = await server.account();
    const mine = await account.client.GET('/events', { params: { query: { per_page: 10 } } });
    const id = mine.data?.data[0]?.id ?? '';
    const answer = await other.json.POST('/events/{id}/redeliver', { params: { path: { id } } });
    expect(answer.response.status).toBe(404);
  });
});

describe("the client's verifyWebhook", () => {
  it('accepts a real delivery, and refuses it with another secret or a changed body', async () => {
    const { verifyWebhook, WebhookVerificationError } = await import('../../client/src/index.js');
    const last = receiver.received.at(-1);
    const headers = (last?.headers ?? {}) as Record<string, string>;
    const event = verifyWebhook(secret, last?.body ?? '', headers);
    expect(event.id).toBe(headers['webhook-id']);
    // Synchronously: a receiver that forgets `await` inside try/catch still refuses a forged delivery.
    expect(() => verifyWebhook(`whsec_${'A'.repeat(32)}`, last?.body ?? '', headers)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, `${last?.body} `, headers)).toThrow(WebhookVerificationError);
  });
});

describe('domain state changes', () => {
  it('are events of their own, written with the state change (domain.active once its record is found)', async () => {
    const { applyCheck, SCHEDULED_CAUSE } = await import('../../server/domains/states.js');
    const { DEFAULT_SCHEDULE } = await import('../../server/domains/check-rules.js');
    const { webhookFanOut } = await import('../../server/webhooks/fan-out.js');
    const events = { cause: SCHEDULED_CAUSE, subscriber: webhookFanOut(server.webhooks) };
    const created = await account.client.POST('/domains', { body: { name: 'state-events.example.com' } });
    const id = created.data?.data.id ?? 0;
    const before = receiver.received.length;
    // The check's outcome as a lookup would give it; the state machine and the event are the service's own.
    await applyCheck(
      server.db,
      id,
      { result: { code: 'found', message: 'found', values: [] }, routing: noTarget('subdomain', NO_TARGETS) },
      DEFAULT_SCHEDULE,
      new Date(),
      events,
    );
    const all = await receiver.until((r) => r.slice(before).some((x) => JSON.parse(x.body).type === 'domain.active'));
    const active = all.slice(before).find((x) => JSON.parse(x.body).type === 'domain.active');
    const payload = JSON.parse(active?.body ?? '{}');
    expect(payload.data.object).toMatchObject({ id, status: 'active' });
    expect(payloadFindings(payload)).toEqual([]);
    // Found again: no state change, no event.
    await applyCheck(
      server.db,
      id,
      { result: { code: 'found', message: 'found', values: [] }, routing: noTarget('subdomain', NO_TARGETS) },
      DEFAULT_SCHEDULE,
      new Date(),
      events,
    );
    const logged = await account.client.GET('/events', { params: { query: { type: 'domain.active', per_page: 10 } } });
    expect(logged.data?.data.filter((event) => event.type === 'domain.active')).toHaveLength(1);
  });
});
