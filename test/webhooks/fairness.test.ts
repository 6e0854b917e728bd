// Webhook deliveries are fair between accounts: one account whose receivers never answer holds at most its share
// of the delivery pool, so another account's deliveries to a healthy receiver keep arriving at once. The claim
// statement's rules first (on rows, without sending), then the whole service against real receivers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDeliveries } from '../../server/webhooks/deliveries.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** A receiver that takes every request and never answers (until it is closed). */
async function startHangingReceiver(): Promise<{ url: string; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server: Server = createServer(() => {
    requests++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`,
    requests: () => requests,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function addEndpoints(account: TestAccount, url: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const { data, error } = await account.json.POST('/webhook-endpoints', {
      body: { url: `${url}?n=${i}`, enabled_events: ['*'] },
    });
    expect(error).toBeUndefined();
    ids.push(data?.data.id ?? 0);
  }
  return ids;
}

async function makeChanges(account: TestAccount, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { response } = await account.client.POST('/spaces', { body: { name: `change ${i}` } });
    expect(response.status).toBe(201);
  }
}

describe('the claim statement', () => {
  let server: TestServer;
  let noisyEndpoints: number[];
  let quietEndpoint: number;
  const fairness = { endpointConcurrency: 2, accountConcurrency: 4 };

  beforeAll(async () => {
    // No job runs: the rows stay as the claims leave them.
    server = await startServer();
    const noisy = await server.account();
    const quiet = await server.account();
    noisyEndpoints = await addEndpoints(noisy, 'http://127.0.0.1:9/never', 10);
    await makeChanges(noisy, 6);
    // The noisy account's deliveries are due long before the quiet one's (retries that re-enter).
    await server.db.updateTable('webhook_deliveries').set({ next_attempt_at: '2000-01-01T00:00:00.000Z' }).execute();
    [quietEndpoint = 0] = await addEndpoints(quiet, 'http://127.0.0.1:9/quiet', 1);
    await makeChanges(quiet, 1);
  });
  afterAll(async () => {
    await server?.close();
  });

  const inFlight = async (worker?: string) => {
    let query = server.db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('state', '=', 'pending')
      .where('claimed_until', '>', new Date().toISOString())
      .groupBy('endpoint_id');
    if (worker) query = query.where('claimed_by', '=', worker);
    return new Map((await query.execute()).map((row) => [Number(row.endpoint_id), Number(row.n)]));
  };

  it("takes the quiet account's new delivery beside the noisy one's older ones, within each cap", async () => {
    const claimed = await claimDeliveries(server.db, { limit: 8, worker: 'one', leaseMs: 60_000 }, fairness);
    const byEndpoint = await inFlight('one');
    expect(claimed.map((delivery) => delivery.endpoint_id)).toContain(quietEndpoint);
    // The noisy account: its share of the pool (4 of 8), over four of its endpoints, not one endpoint's queue.
    const noisy = claimed.filter((delivery) => noisyEndpoints.includes(delivery.endpoint_id));
    expect(noisy).toHaveLength(4);
    expect(new Set(noisy.map((delivery) => delivery.endpoint_id)).size).toBe(4);
    expect(Math.max(...byEndpoint.values())).toBeLessThanOrEqual(1);
  });

  it('gives an account no more while its share is in flight, and an endpoint no more than its bound', async () => {
    expect(await claimDeliveries(server.db, { limit: 8, worker: 'one', leaseMs: 60_000 }, fairness)).toEqual([]);
    // Another process has a pool of its own; each endpoint's bound counts every process's deliveries.
    for (let round = 0; round < 5; round++) {
      await claimDeliveries(server.db, { limit: 8, worker: `other-${round}`, leaseMs: 60_000 }, fairness);
    }
    const byEndpoint = await inFlight();
    expect([...byEndpoint.values()].every((n) => n <= fairness.endpointConcurrency)).toBe(true);
    expect(byEndpoint.size).toBe(11);
  });

  it('slows a failing endpoint to one delivery in flight', async () => {
    await server.db.updateTable('webhook_deliveries').set({ claimed_by: null, claimed_until: null }).execute();
    const [failing = 0] = noisyEndpoints;
    await server.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date().toISOString() })
      .where('id', '=', failing)
      .execute();
    for (let round = 0; round < 5; round++) {
      await claimDeliveries(server.db, { limit: 8, worker: `again-${round}`, leaseMs: 60_000 }, fairness);
    }
    expect((await inFlight()).get(failing)).toBe(1);
  });
});

describe('one account whose receivers hang beside another whose receiver answers', () => {
  let server: TestServer;
  let hanging: Awaited<ReturnType<typeof startHangingReceiver>>;
  let healthy: Receiver;
  let noisy: TestAccount;
  let quiet: TestAccount;
  const settings = {
    // Short schedules: each hanging attempt times out in 2 s and is retried soon after, again and again.
    timeoutMs: 2_000,
    retryScheduleS: [0.2, 0.2, 0.5, 0.5, 1, 1],
    // A new delivery is noticed at its commit, not by the poll.
    pollMs: 10_000,
    concurrency: 8,
    endpointConcurrency: 2,
    accountConcurrency: 4,
  };

  beforeAll(async () => {
    server = await startServer({ deliver: true, webhooks: settings });
    hanging = await startHangingReceiver();
    healthy = await startReceiver();
    noisy = await server.account();
    quiet = await server.account();
    await addEndpoints(noisy, hanging.url, 10);
    await addEndpoints(quiet, healthy.url, 1);
  });
  afterAll(async () => {
    await hanging?.close();
    await server?.close();
    await healthy?.close();
  });

  it("delivers each of the quiet account's changes within 3 s while the noisy one's 200 deliveries hang", async () => {
    await makeChanges(noisy, 20);
    const latencies: number[] = [];
    for (let i = 0; i < 4; i++) {
      // Each round after the noisy account's attempts timed out and more of its deliveries and retries took
      // their place: the quiet account's change meets a pool that has been full of hanging attempts all along.
      const attempts = settings.accountConcurrency * (i + 1);
      await expect.poll(() => hanging.requests(), { timeout: 15_000 }).toBeGreaterThanOrEqual(attempts);
      const before = healthy.received.length;
      const { data } = await quiet.client.POST('/spaces', { body: { name: `quiet ${i}` } });
      const answered = Date.now();
      const id = data?.data.id;
      const [arrival] = (await healthy.until((r) => r.length > before, 10_000)).slice(before);
      expect(JSON.parse(arrival?.body ?? '{}').data.object.id).toBe(id);
      latencies.push((arrival?.at ?? Number.POSITIVE_INFINITY) - answered);
      // Never more of the noisy account in flight than its share, whatever its retries do.
      const flying = await server.db
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('e.url', 'like', `${hanging.url}%`)
        .where('d.state', '=', 'pending')
        .where('d.claimed_until', '>', new Date().toISOString())
        .executeTakeFirstOrThrow();
      expect(Number(flying.n)).toBeLessThanOrEqual(settings.accountConcurrency);
    }
    expect(latencies).toHaveLength(4);
    expect(latencies.filter((ms) => ms > 3_000)).toEqual([]);
  });
});
