// An endpoint that stops taking a type sends nothing more of it: its queued deliveries of that type (retrying ones
// included) are cancelled by the update, in its transaction, and the delivery job checks again at send time; a
// re-pointed endpoint's new url gets only what the key that re-pointed it may read. Both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { apiClient, startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let server: TestServer;
let receiver: Receiver;
let owner: TestAccount;

beforeAll(async () => {
  server = await startServer({
    deliver: true,
    webhooks: { pollMs: 50, retryScheduleS: [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2], timeoutMs: 1000 },
  });
  receiver = await startReceiver();
  owner = await server.account('repointing');
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** The states of an endpoint's deliveries, by event type. */
async function states(endpointId: number): Promise<Array<{ type: string; state: string }>> {
  return server.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(['e.type', 'd.state'])
    .where('d.endpoint_id', '=', endpointId)
    .orderBy('d.id')
    .execute();
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (const deadline = Date.now() + 20_000; ; ) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('an endpoint that stops taking a type', () => {
  it('cancels its queued deliveries of it, and its new url receives only what the key may read', async () => {
    // Nothing listens on port 9: every attempt fails and is retried, so the deliveries stay queued.
    const made = await owner.json.POST('/webhook-endpoints', {
      body: { url: 'http://127.0.0.1:9/old', enabled_events: ['domain.created', 'space.created'] },
    });
    const id = made.data?.data.id ?? 0;
    await owner.client.POST('/domains', { body: { name: 'repointed.example' } });
    await owner.client.POST('/domains', { body: { name: 'second.repointed.example' } });
    await owner.client.POST('/spaces', { body: { name: 'Repointed', color: 5 } });
    expect((await states(id)).map((row) => row.state)).toEqual(['pending', 'pending', 'pending']);

    const narrow = apiClient(
      server.apiUrl,
      (await issueKey(server.db, owner.name, { scopes: ['webhooks:write', 'spaces:read'] })).key,
      'json',
    );
    // Re-pointing hands the new url what the endpoint takes now: the key needs domains:read too.
    const both = await narrow.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id } },
      body: { url: receiver.url, enabled_events: ['space.created'] },
    });
    expect(both.response.status).toBe(403);
    expect(both.error?.type).toBe('/problems/insufficient-scope');
    expect(both.error?.detail).toContain('domains:read');
    expect((await states(id)).filter((row) => row.state === 'cancelled')).toEqual([]);

    // Narrowing needs only what it will take; it cancels what it no longer takes, retrying deliveries included.
    const narrowed = await narrow.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id } },
      body: { enabled_events: ['space.created'] },
    });
    expect(narrowed.response.status).toBe(200);
    expect(await states(id)).toEqual([
      { type: 'domain.created', state: 'cancelled' },
      { type: 'domain.created', state: 'cancelled' },
      { type: 'space.created', state: 'pending' },
    ]);
    const repointed = await narrow.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id } },
      body: { url: receiver.url },
    });
    expect(repointed.response.status).toBe(200);
    await owner.client.POST('/spaces', { body: { name: 'After the move', color: 1 } });
    await receiver.until((received) => received.length >= 2);
    const types = receiver.received.map((request) => (JSON.parse(request.body) as { type: string }).type);
    expect(types).toEqual(['space.created', 'space.created']);

    // The key reads the log of its own changes: the domain attempts are listed, their answers withheld.
    const log = await narrow.GET('/webhook-endpoints/{id}/deliveries', {
      params: { path: { id }, query: { per_page: 100 } },
    });
    const domainAttempts = (log.data?.data ?? []).filter((attempt) => attempt.event_type === 'domain.created');
    expect(domainAttempts.length).toBeGreaterThan(0);
    for (const attempt of domainAttempts) expect([attempt.withheld, attempt.response_body]).toEqual([true, null]);
  });

  it('never sends a delivery of a type the endpoint no longer takes, checked again at send time', async () => {
    const made = await owner.json.POST('/webhook-endpoints', {
      body: { url: receiver.url, enabled_events: ['space.deleted'] },
    });
    const id = made.data?.data.id ?? 0;
    await owner.client.POST('/domains', { body: { name: 'raced.example' } });
    const event = await server.db
      .selectFrom('events')
      .select('id')
      .where('type', '=', 'domain.created')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    // As a delivery queued before an update and claimed after it would be: pending, of a type no longer taken.
    const now = new Date().toISOString();
    const { id: deliveryId } = await server.db
      .insertInto('webhook_deliveries')
      .values({ endpoint_id: id, event_id: event.id, state: 'pending', next_attempt_at: now, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const settled = await until(
      () =>
        server.db
          .selectFrom('webhook_deliveries')
          .select('state')
          .where('id', '=', deliveryId)
          .executeTakeFirstOrThrow(),
      (row) => row.state !== 'pending',
    );
    expect(settled.state).toBe('cancelled');
    const sent = receiver.received.map((request) => (JSON.parse(request.body) as { type: string }).type);
    expect(sent).not.toContain('domain.created');
  });
});
