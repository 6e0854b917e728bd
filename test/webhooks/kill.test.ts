// kill -9 during delivery: the service (a child process) is killed while deliveries are in flight, started again
// on the same database, and every event is delivered; only the attempts in flight at the kill may come twice
// (at least once), every acknowledged one never again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { childServices, serviceEnv, subscribeFirstKey } from './child-service.js';

const CONCURRENCY = 4;
const EVENTS = 20;
let database: TestDatabase;
let receiver: Receiver;

const env = () =>
  serviceEnv(database.url, {
    WEBHOOK_TIMEOUT_S: '1',
    WEBHOOK_POLL_S: '0.05',
    WEBHOOK_RETRY_SCHEDULE_S: '0.2,0.2,0.2,0.2,0.2',
    WEBHOOK_CONCURRENCY: String(CONCURRENCY),
  });

const services = childServices(env);

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await services.stopAll();
  await receiver?.close();
  await database?.drop();
});

describe('kill -9 during delivery', () => {
  it('loses no event and repeats none that was acknowledged', async () => {
    const first = await services.start();
    const { headers } = await subscribeFirstKey(first, receiver.url);
    // The first answers hang past the attempt's limit: deliveries are in flight when the process dies.
    receiver.script(...Array.from({ length: CONCURRENCY }, () => ({ delayMs: 3000 })));
    for (let i = 0; i < EVENTS; i++) {
      const created = await fetch(`${first.origin}/api/v1/spaces`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `killed ${i}` }),
      });
      expect(created.status).toBe(201);
    }
    await receiver.until((r) => r.length >= CONCURRENCY);
    first.run.child.kill('SIGKILL');
    await first.run.exited;

    const second = await services.start();
    const events = (await (
      await fetch(`${second.origin}/api/v1/events?type=space.created&per_page=100`, { headers })
    ).json()) as { data: Array<{ id: string }> };
    const ids = events.data.map((event) => event.id).sort();
    expect(ids).toHaveLength(EVENTS);
    // Every event arrives (the claims of the killed process run out, and its deliveries are taken again).
    const delivered = () =>
      new Set(receiver.received.filter((r) => r.answer.delayMs === undefined).map((r) => r.headers['webhook-id']));
    await receiver.until(() => delivered().size === EVENTS, 60_000);
    expect([...delivered()].sort()).toEqual(ids);
    // Acknowledged once each: no event got two 2xx answers in time.
    const acknowledged = receiver.received
      .filter((r) => r.answer.delayMs === undefined)
      .map((r) => r.headers['webhook-id']);
    expect(acknowledged.length).toBe(EVENTS);
    await second.run.stop('SIGTERM');
  }, 180_000);
});
