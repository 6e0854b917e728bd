// Recovery after an outage (POST /webhook-endpoints/{id}/recover) on the real app, its job runner and a real
// receiver: an endpoint disabled by its receiver, brought back and recovered since a time gets each event it
// missed exactly once, in order, with its original webhook-id, and nothing it already had; the refusals (a
// disabled endpoint, a window past retention, an overlapping recovery still running) and Idempotency-Key; and a
// recovery walked by two instances at once on one database queues each missed event once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { backgroundJobs } from '../../server/background.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { wakeupsOf } from '../../server/db/wakeups.js';
import { NO_SUBSCRIBER, recordEvent } from '../../server/events/outbox.js';
import { type JobRunner, startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';
import { RECOVERY_BATCH } from '../../server/webhooks/recoveries.js';
import { offlineDomainChecks, startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

let server: TestServer;
let receiver: Receiver;
let account: TestAccount;
const runners: JobRunner[] = [];
let second: Database | undefined;

beforeAll(async () => {
  // No runner yet: a recovery stays running until the tests start one (startRunner).
  // The default endpoint concurrency: a recovery's deliveries still arrive one at a time, oldest first.
  server = await startServer({ webhooks: { pollMs: 50, retryScheduleS: [0.2, 0.2], timeoutMs: 2000 } });
  receiver = await startReceiver();
  account = await server.account();
});
afterAll(async () => {
  for (const runner of runners) await runner.stop();
  await second?.destroy();
  await server?.close();
  await receiver?.close();
});

/** The service's jobs on `db` (another connection to the same database is another instance). */
function startRunner(db: Database = server.db) {
  const logger = createLogger('silent');
  const runner = startJobs(
    backgroundJobs(db, { webhooks: server.webhooks, domainChecks: offlineDomainChecks(), logger }),
    { db, wakeups: wakeupsOf(db), logger },
  );
  runners.push(runner);
  return runner;
}

async function newEndpoint(url = receiver.url) {
  const { data, error } = await account.json.POST('/webhook-endpoints', {
    body: { url, enabled_events: ['space.created', 'space.updated'] },
  });
  expect(error).toBeUndefined();
  return data?.data.id ?? 0;
}

const recover = (id: number, body: { since: string; until?: string }, key?: string) =>
  account.json.POST('/webhook-endpoints/{id}/recover', {
    params: { path: { id }, header: key ? { 'Idempotency-Key': key } : {} },
    body,
  });

async function recoveryWhenEnded(endpointId: number, recoveryId: number) {
  for (let i = 0; i < 400; i++) {
    const { data } = await account.client.GET('/webhook-endpoints/{id}/recoveries/{recovery_id}', {
      params: { path: { id: endpointId, recovery_id: recoveryId } },
    });
    if (data && data.data.status !== 'running') return data.data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`recovery ${recoveryId} still running after 20 s`);
}

describe('starting a recovery', () => {
  it('answers 202 with a running recovery, readable and listed; refuses an overlapping one while it runs', async () => {
    const endpointId = await newEndpoint('http://127.0.0.1:9/unused');
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const started = await recover(endpointId, { since }, 'recover-once');
    expect(started.response.status).toBe(202);
    const recovery = started.data?.data;
    expect(recovery).toMatchObject({ endpoint_id: endpointId, since, status: 'running', queued: 0, skipped: 0 });
    expect(started.response.headers.get('location')).toBe(
      `/api/v1/webhook-endpoints/${endpointId}/recoveries/${recovery?.id}`,
    );

    const replayed = await recover(endpointId, { since }, 'recover-once');
    expect(replayed.response.headers.get('idempotent-replayed')).toBe('true');
    expect(replayed.data?.data.id).toBe(recovery?.id);

    const overlapping = await recover(endpointId, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(overlapping.response.status).toBe(409);
    expect(overlapping.error).toMatchObject({ type: '/problems/webhook-recovery-running' });
    expect(overlapping.error?.detail).toContain(`Recovery ${recovery?.id}`);

    const listed = await account.client.GET('/webhook-endpoints/{id}/recoveries', {
      params: { path: { id: endpointId }, query: { per_page: 10 } },
    });
    expect(listed.data?.data.map((r) => r.id)).toEqual([recovery?.id]);
    const other = await account.client.GET('/webhook-endpoints/{id}/recoveries/{recovery_id}', {
      params: { path: { id: endpointId, recovery_id: (recovery?.id ?? 0) + 1000 } },
    });
    expect(other.response.status).toBe(404);
  });

  it('refuses a disabled endpoint naming its status, and a window past retention naming since', async () => {
    const endpointId = await newEndpoint('http://127.0.0.1:9/unused');
    const tooOld = await recover(endpointId, { since: new Date(Date.now() - 31 * 86_400_000).toISOString() });
    expect(tooOld.response.status).toBe(422);
    expect(tooOld.error?.errors?.map((e) => e.field)).toEqual(['since']);

    await account.json.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id: endpointId } },
      body: { status: 'disabled' },
    });
    const disabled = await recover(endpointId, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(disabled.response.status).toBe(409);
    expect(disabled.error).toMatchObject({ type: '/problems/webhook-endpoint-disabled' });
    expect(disabled.error?.detail).toContain('disabled (manual)');
  });

  it('needs the read scope of what the endpoint receives', async () => {
    const endpointId = await newEndpoint('http://127.0.0.1:9/unused');
    const { key } = await issueKey(server.db, account.name, { scopes: ['webhooks:write'] });
    const response = await fetch(`${server.apiUrl}/webhook-endpoints/${endpointId}/recover`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ since: new Date(Date.now() - 60_000).toISOString() }),
    });
    expect(response.status).toBe(403);
    expect(response.headers.get('x-accepted-scopes')).toBe('spaces:read');
  });
});

describe('a recovery after an outage', () => {
  it('delivers each missed event once, in order, with its webhook-id, and nothing the endpoint had', async () => {
    startRunner();
    const endpointId = await newEndpoint();
    const since = new Date().toISOString();
    const space = async (name: string) => {
      const created = await account.client.POST('/spaces', { body: { name } });
      expect(created.response.status).toBe(201);
    };
    await space('delivered');
    await receiver.until((r) => r.length >= 1);
    // The receiver is gone: its endpoint is disabled at once, and what follows is not queued for it.
    receiver.script({ status: 410 });
    await space('refused');
    await receiver.until((r) => r.length >= 2);
    for (let i = 0; i < 100; i++) {
      const { data } = await account.client.GET('/webhook-endpoints/{id}', { params: { path: { id: endpointId } } });
      if (data?.data.status === 'disabled') break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await space('missed-1');
    await space('missed-2');
    const events = await account.client.GET('/events', { params: { query: { per_page: 10 } } });
    // The spaces' events (the log also has the notice of the endpoint's disabling, which it does not take).
    const eventIds = (events.data?.data ?? [])
      .filter((event) => event.type === 'space.created')
      .map((event) => event.id)
      .reverse();
    expect(eventIds.length).toBe(4);

    await account.json.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id: endpointId } },
      body: { status: 'enabled' },
    });
    const started = await recover(endpointId, { since });
    expect(started.response.status).toBe(202);
    const ended = await recoveryWhenEnded(endpointId, started.data?.data.id ?? 0);
    expect(ended).toMatchObject({ status: 'completed', queued: 3, skipped: 0 });
    const after = await receiver.until((r) => r.length >= 5);
    // Each missed event once, in order, with its own id.
    expect(after.slice(2).map((r) => r.headers['webhook-id'])).toEqual(eventIds.slice(1));
    expect(after.slice(2).map((r) => JSON.parse(r.body).data.object.name)).toEqual(['refused', 'missed-1', 'missed-2']);

    // Again over the same window: everything has been received now, so nothing is queued.
    const again = await recover(endpointId, { since });
    const nothing = await recoveryWhenEnded(endpointId, again.data?.data.id ?? 0);
    expect(nothing).toMatchObject({ status: 'completed', queued: 0, skipped: 0 });
  });

  it('counts what does not fit in the queue as skipped', async () => {
    // A server of its own, whose endpoints may queue two deliveries.
    const small = await startServer({ webhooks: { maxQueuePerEndpoint: 2 } });
    try {
      const other = await small.account();
      const { data } = await other.json.POST('/webhook-endpoints', {
        body: { url: 'http://127.0.0.1:9/unused', enabled_events: ['space.created'] },
      });
      const id = data?.data.id ?? 0;
      await other.json.PATCH('/webhook-endpoints/{id}', { params: { path: { id } }, body: { status: 'disabled' } });
      const from = new Date().toISOString();
      for (const name of ['a', 'b', 'c']) await other.client.POST('/spaces', { body: { name } });
      await other.json.PATCH('/webhook-endpoints/{id}', { params: { path: { id } }, body: { status: 'enabled' } });
      const started = await other.json.POST('/webhook-endpoints/{id}/recover', {
        params: { path: { id } },
        body: { since: from },
      });
      expect(started.response.status).toBe(202);
      const logger = createLogger('silent');
      const runner = startJobs(
        backgroundJobs(small.db, { webhooks: small.webhooks, domainChecks: offlineDomainChecks(), logger }),
        { db: small.db, wakeups: wakeupsOf(small.db), logger },
      );
      try {
        let ended: { status: string; queued: number; skipped: number } | undefined;
        for (let i = 0; i < 400 && ended?.status !== 'completed'; i++) {
          const read = await other.client.GET('/webhook-endpoints/{id}/recoveries/{recovery_id}', {
            params: { path: { id, recovery_id: started.data?.data.id ?? 0 } },
          });
          ended = read.data?.data;
          if (ended?.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(ended).toMatchObject({ status: 'completed', queued: 2, skipped: 1 });
      } finally {
        await runner.stop();
      }
    } finally {
      await small.close();
    }
  });
});

describe('a recovery walked by two instances', () => {
  it('queues each missed event exactly once', async () => {
    second = openDatabase(server.databaseUrl);
    startRunner(second);
    const endpointId = await newEndpoint('http://127.0.0.1:9/unused');
    await account.json.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id: endpointId } },
      body: { status: 'disabled' },
    });
    const since = new Date().toISOString();
    // More events than one step takes, written as the event log writes them (no endpoint is enabled to take them).
    const { account: owner } = await issueKey(server.db, account.name);
    const count = RECOVERY_BATCH * 2 + 10;
    await server.db.transaction().execute(async (trx) => {
      for (let i = 0; i < count; i++) {
        await recordEvent(
          trx,
          {
            accountId: owner.id,
            type: 'space.created',
            data: { object: { id: i + 1, name: `bulk-${i}` } },
            cause: { ...SYSTEM_CAUSE, requestId: 'seed' },
          },
          NO_SUBSCRIBER,
        );
      }
    });
    await account.json.PATCH('/webhook-endpoints/{id}', {
      params: { path: { id: endpointId } },
      body: { status: 'enabled' },
    });
    const started = await recover(endpointId, { since });
    const ended = await recoveryWhenEnded(endpointId, started.data?.data.id ?? 0);
    expect(ended).toMatchObject({ status: 'completed', queued: count, skipped: 0 });
    const perEvent = await server.db
      .selectFrom('webhook_deliveries')
      .select((eb) => ['event_id', eb.fn.countAll().as('n')])
      .where('endpoint_id', '=', endpointId)
      .groupBy('event_id')
      .execute();
    expect(perEvent.length).toBe(count);
    expect(perEvent.filter((row) => Number(row.n) !== 1)).toEqual([]);
  });
});
