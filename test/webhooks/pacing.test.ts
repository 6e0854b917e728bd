// Pacing a receiver and its gateway, on the real app with two delivery runners on one database (two instances):
// an endpoint's `rate_limit` bounds its attempts in every sliding second across both, a 429 with Retry-After holds
// all its deliveries (not only the one answered) and shows in the delivery log, and its `headers` ride on every
// delivery, with the names a delivery owns refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundJobs } from '../../server/background.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { wakeupsOf } from '../../server/db/wakeups.js';
import { type JobRunner, startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';
import { offlineDomainChecks, startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let server: TestServer;
let receiver: Receiver;
let account: TestAccount;
let second: Database;
let runner: JobRunner;

beforeAll(async () => {
  server = await startServer({
    deliver: true,
    webhooks: { pollMs: 50, retryScheduleS: [0.2, 0.2], timeoutMs: 2000, endpointConcurrency: 1 },
  });
  // A second instance: its own connection to the database and its own runner.
  second = openDatabase(server.databaseUrl);
  const logger = createLogger('silent');
  runner = startJobs(
    backgroundJobs(second, { webhooks: server.webhooks, domainChecks: offlineDomainChecks(), logger }),
    { db: second, wakeups: wakeupsOf(second), logger },
  );
  receiver = await startReceiver();
  account = await server.account();
});
afterAll(async () => {
  await runner?.stop();
  await second?.destroy();
  await server?.close();
  await receiver?.close();
});

async function attemptsOf(endpointId: number) {
  const { data } = await account.client.GET('/webhook-endpoints/{id}/deliveries', {
    params: { path: { id: endpointId }, query: { per_page: 100 } },
  });
  return (data?.data ?? []).slice().reverse();
}

describe('headers', () => {
  it('carries them on every delivery and shows them on the endpoint', async () => {
    const created = await account.json.POST('/webhook-endpoints', {
      body: { url: receiver.url, enabled_events: ['space.created'], headers: { 'X-Gateway-Key': 'k-123' } },
    });
    expect(created.data?.data.headers).toEqual({ 'X-Gateway-Key': 'k-123' });
    const id = created.data?.data.id ?? 0;
    const before = receiver.received.length;
    await account.json.POST('/webhook-endpoints/{id}/test', { params: { path: { id } } });
    const [got] = (await receiver.until((r) => r.length > before)).slice(before);
    expect(got?.headers['x-gateway-key']).toBe('k-123');
    expect(got?.headers['webhook-id']).toMatch(/^evt_/);
    await account.json.DELETE('/webhook-endpoints/{id}', { params: { path: { id } } });
  });

  it('refuses the names a delivery owns, naming each', async () => {
    const refused = await account.json.POST('/webhook-endpoints', {
      body: {
        url: receiver.url,
        enabled_events: ['space.created'],
        headers: { 'Content-Type': 'text/plain', 'Webhook-Id': 'x', Connection: 'close', 'X-Fine': 'ok' },
      },
    });
    expect(refused.response.status).toBe(422);
    expect(refused.error?.errors?.map((e) => e.field)).toEqual([
      'headers.Content-Type',
      'headers.Webhook-Id',
      'headers.Connection',
    ]);
    const tooMany = await account.json.POST('/webhook-endpoints', {
      body: {
        url: receiver.url,
        enabled_events: ['space.created'],
        headers: { A: '1', B: '2', C: '3', D: '4', E: '5', F: '6' },
      },
    });
    expect(tooMany.response.status).toBe(422);
  });
});

describe('rate_limit and Retry-After across two instances', () => {
  it('never attempts more than rate_limit in a second, and holds every delivery for a Retry-After', async () => {
    const created = await account.json.POST('/webhook-endpoints', {
      body: { url: receiver.url, enabled_events: ['space.created'], rate_limit: 2 },
    });
    expect(created.data?.data.rate_limit).toBe(2);
    const id = created.data?.data.id ?? 0;
    const before = receiver.received.length;
    receiver.script({ status: 429, headers: { 'retry-after': '2' } });
    for (let i = 0; i < 6; i++) await account.client.POST('/spaces', { body: { name: `paced-${i}` } });
    // Six events, the first answered 429 once: seven attempts.
    await receiver.until((r) => r.length >= before + 7, 30_000);
    // An attempt is recorded at its worker's next claim: read the log once all seven are in it (bounded).
    let attempts = await attemptsOf(id);
    for (let i = 0; i < 200 && attempts.length < 7; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      attempts = await attemptsOf(id);
    }
    expect(attempts.length).toBe(7);
    const times = attempts.map((a) => Date.parse(a.attempted_at));
    // The 429 is first; it shows the pause, and no attempt follows before it ends.
    expect(attempts[0]).toMatchObject({ response_status: 429, retry_after_s: 2 });
    expect(Math.min(...times.slice(1)) - (times[0] ?? 0)).toBeGreaterThanOrEqual(2000);
    // In any second, at most two attempts.
    const sorted = [...times].sort((a, b) => a - b);
    for (let i = 2; i < sorted.length; i++) {
      expect((sorted[i] ?? 0) - (sorted[i - 2] ?? 0)).toBeGreaterThanOrEqual(1000);
    }
  });
});
