// A change's fan-out meets a webhook endpoint that another transaction is deleting: the change must commit (201)
// without a delivery for the endpoint that is gone, never 500 on the delivery's foreign key. The delete is held
// open by a session of the test's own, so the interleaving is the same on every run: the store's fan-out reaches
// the endpoint's row while the delete is uncommitted, then the delete commits. Runs in the PostgreSQL leg.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../service/process.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { form, type Service, send, startService } from './support.js';

let database: TestDatabase;
let service: Service;

beforeAll(async () => {
  database = await freshPostgresDatabase();
  service = await startService({ DATABASE_URL: database.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' });
}, 150_000);

afterAll(async () => {
  await stopAll();
  await database?.drop();
});

/** Resolves once a backend other than `mine` waits for a lock (bounded: fails after 20 s). */
async function someoneWaitsForALock(client: pg.Client, mine: number) {
  for (let i = 0; i < 200; i++) {
    const { rows } = await client.query(
      "select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and pid <> $1",
      [mine],
    );
    if (rows[0].n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('no request waited for the endpoint row within 20 s');
}

describe('a change while its account deletes a webhook endpoint', { timeout: 90_000 }, () => {
  it('commits the change without a delivery for the deleted endpoint', async () => {
    const endpoint = await send(`${service.origin}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${service.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
    });
    expect(endpoint.status).toBe(201);
    const endpointId = (endpoint.body as { data: { id: number } }).data.id;

    const deleter = new pg.Client({ connectionString: database.url });
    await deleter.connect();
    try {
      const { rows } = await deleter.query('select pg_backend_pid() as pid');
      await deleter.query('begin');
      await deleter.query('delete from webhook_endpoints where id = $1', [endpointId]);
      const stored = send(`${service.origin}/api/v1/spaces`, {
        method: 'POST',
        headers: form(service.key),
        body: 'name=during-the-delete',
      });
      await someoneWaitsForALock(deleter, rows[0].pid);
      await deleter.query('commit');
      const answer = await stored;
      expect(answer.status).toBe(201);
      const { rows: left } = await deleter.query(
        "select (select count(*)::int from spaces where name = 'during-the-delete') as spaces, (select count(*)::int from webhook_deliveries) as deliveries",
      );
      expect(left).toEqual([{ spaces: 1, deliveries: 0 }]);
    } finally {
      await deleter.end();
    }
  });
});

describe('a redelivery or a test while its account deletes a webhook endpoint', { timeout: 90_000 }, () => {
  const json = () => ({ Authorization: `Bearer ${service.key}`, 'Content-Type': 'application/json' });
  const newEndpoint = async () => {
    const created = await send(`${service.origin}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: json(),
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
    });
    expect(created.status).toBe(201);
    return (created.body as { data: { id: number } }).data.id;
  };
  const anEvent = async () => {
    const events = await send(`${service.origin}/api/v1/events?per_page=10`, { headers: json() });
    expect(events.status, JSON.stringify(events.body)).toBe(200);
    return (events.body as { data: Array<{ id: string }> }).data[0]?.id as string;
  };

  /** Sends `request` while `endpointId`'s delete is held open, commits the delete once it waits, and answers. */
  async function duringTheDelete(endpointId: number, request: () => ReturnType<typeof send>) {
    const deleter = new pg.Client({ connectionString: database.url });
    await deleter.connect();
    try {
      const { rows } = await deleter.query('select pg_backend_pid() as pid');
      await deleter.query('begin');
      await deleter.query('delete from webhook_endpoints where id = $1', [endpointId]);
      const answer = request();
      await someoneWaitsForALock(deleter, rows[0].pid);
      await deleter.query('commit');
      return await answer;
    } finally {
      await deleter.end();
    }
  }

  it('answers 404 to a test of the endpoint, and keeps no event of it', async () => {
    const endpointId = await newEndpoint();
    const answer = await duringTheDelete(endpointId, () =>
      send(`${service.origin}/api/v1/webhook-endpoints/${endpointId}/test`, { method: 'POST', headers: json() }),
    );
    expect([answer.status, answer.type]).toEqual([404, expect.stringContaining('not-found')]);
    const tests = await send(`${service.origin}/api/v1/events?per_page=10&type=webhook.test`, { headers: json() });
    expect((tests.body as { data: unknown[] }).data).toEqual([]);
  });

  it('answers 404 to a redelivery to the endpoint by name', async () => {
    const endpointId = await newEndpoint();
    const eventId = await anEvent();
    const answer = await duringTheDelete(endpointId, () =>
      send(`${service.origin}/api/v1/events/${eventId}/redeliver`, {
        method: 'POST',
        headers: json(),
        body: JSON.stringify({ endpoint_id: endpointId }),
      }),
    );
    expect([answer.status, answer.type]).toEqual([404, expect.stringContaining('not-found')]);
  });

  it('redelivers to every other endpoint, without the deleted one', async () => {
    const kept = await newEndpoint();
    const deleted = await newEndpoint();
    const eventId = await anEvent();
    const answer = await duringTheDelete(deleted, () =>
      send(`${service.origin}/api/v1/events/${eventId}/redeliver`, { method: 'POST', headers: json(), body: '{}' }),
    );
    expect(answer.status).toBe(202);
    const queuedFor = (answer.body as { data: { endpoint_ids: number[] } }).data.endpoint_ids;
    expect(queuedFor).toContain(kept);
    expect(queuedFor).not.toContain(deleted);
  });
});
