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
