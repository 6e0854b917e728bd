// SQLite's side of postgres-endpoint-delete.test.ts: a redelivery or a test of a webhook endpoint while another
// connection deletes it. The delete is held open in this process (BEGIN IMMEDIATE, the endpoint deleted, not yet
// committed), so the requests find the endpoint in a read and wait for the write lock; the delete then commits.
// They answer 404 (by name) or 202 without the deleted endpoint (to all), never 500 on the delivery's foreign key.
// SQLite shows no lock waiters, so the requests are given a moment to reach the lock before the commit; the answers
// are right whatever the timing, and before the fix that moment sufficed for every racing request to fail with 500.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { stopAll } from '../service/process.js';
import { form, type Service, send, startService } from './support.js';

let dir: string;
let file: string;
let service: Service;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-sqlite-endpoint-delete-'));
  file = join(dir, 'db.sqlite');
  service = await startService({
    DATABASE_URL: `sqlite:${file}`,
    DATABASE_LOCK_TIMEOUT_S: '20',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
  });
}, 150_000);

afterAll(async () => {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

const json = () => ({ Authorization: `Bearer ${service.key}`, 'Content-Type': 'application/json' });
const api = (path: string, init: RequestInit = {}) =>
  send(`${service.origin}/api/v1${path}`, { headers: json(), timeoutMs: 40_000, ...init });

async function newEndpoint() {
  const created = await api('/webhook-endpoints', {
    method: 'POST',
    body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', enabled_events: ['*'] }),
  });
  expect(created.status).toBe(201);
  return (created.body as { data: { id: number } }).data.id;
}

describe('a redelivery or a test while another connection deletes the endpoint', { timeout: 90_000 }, () => {
  it('answers 404 by name and leaves the endpoint out of a redelivery to all, never 500', async () => {
    const stored = await send(`${service.origin}/api/v1/spaces`, {
      method: 'POST',
      headers: form(service.key),
      body: 'name=an-event',
    });
    expect(stored.status).toBe(201);
    const events = await api('/events?per_page=10');
    const eventId = (events.body as { data: Array<{ id: string }> }).data[0]?.id;
    const kept = await newEndpoint();
    const deleted = await newEndpoint();

    const deleter = new (sqliteDriver())(file);
    let answers: Awaited<ReturnType<typeof api>>[] = [];
    try {
      deleter.exec('begin immediate');
      deleter.prepare('delete from webhook_endpoints where id = ?').run(deleted);
      const racing = [
        api(`/webhook-endpoints/${deleted}/test`, { method: 'POST' }),
        api(`/events/${eventId}/redeliver`, { method: 'POST', body: JSON.stringify({ endpoint_id: deleted }) }),
        api(`/events/${eventId}/redeliver`, { method: 'POST', body: '{}' }),
      ];
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      deleter.exec('commit');
      answers = await Promise.all(racing);
    } finally {
      if (deleter.inTransaction) deleter.exec('rollback');
      deleter.close();
    }
    expect(answers.map((answer) => [answer.status, answer.type])).toEqual([
      [404, '/problems/not-found'],
      [404, '/problems/not-found'],
      [202, undefined],
    ]);
    expect(answers[2]?.body).toMatchObject({ data: { endpoint_ids: [kept] } });
    // Nothing was kept of the test that found no endpoint.
    const tests = await api('/events?per_page=10&type=webhook.test');
    expect((tests.body as { data: unknown[] }).data).toEqual([]);
  });
});
