// kill -9 during a recovery: the service (a child process) is killed right after it accepted a recovery of more
// events than one step takes, started again on the same database, and the recovery completes, each missed event
// queued for the endpoint exactly once (a step is one transaction: what the killed process committed stays, what
// it had not is done again by the next, once its lease runs out).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { NO_SUBSCRIBER, recordEvent } from '../../server/events/outbox.js';
import { RECOVERY_BATCH } from '../../server/webhooks/recoveries.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { childServices, serviceEnv, subscribeFirstKey } from './child-service.js';

const EVENTS = RECOVERY_BATCH * 3 + 7;
let database: TestDatabase;
let db: Database | undefined;

const services = childServices(() =>
  serviceEnv(database.url, {
    WEBHOOK_POLL_S: '0.05',
  }),
);

beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(async () => {
  await services.stopAll();
  await db?.destroy();
  await database?.drop();
});

describe('kill -9 during a recovery', () => {
  it('completes after a restart, each missed event queued once', { timeout: 240_000 }, async () => {
    const first = await services.start();
    // A receiver that is never there: what is queued stays queued, and is counted.
    const { headers, endpoint } = await subscribeFirstKey(first, 'http://127.0.0.1:9/gone');
    const api = (path: string, init: RequestInit = {}) => fetch(`${first.origin}/api/v1${path}`, { headers, ...init });
    await api(`/webhook-endpoints/${endpoint}`, { method: 'PATCH', body: JSON.stringify({ status: 'disabled' }) });
    const since = new Date().toISOString();
    // The missed events, written as the event log writes them while the endpoint was disabled.
    db = openDatabase(database.url);
    const account = await db.selectFrom('accounts').select('id').executeTakeFirstOrThrow();
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < EVENTS; i++) {
        await recordEvent(
          trx,
          {
            accountId: Number(account.id),
            type: 'space.created',
            data: { object: { id: i + 1, name: `missed-${i}` } },
            cause: SYSTEM_CAUSE,
          },
          NO_SUBSCRIBER,
        );
      }
    });
    await api(`/webhook-endpoints/${endpoint}`, { method: 'PATCH', body: JSON.stringify({ status: 'enabled' }) });
    const started = await api(`/webhook-endpoints/${endpoint}/recover`, {
      method: 'POST',
      body: JSON.stringify({ since }),
    });
    expect(started.status).toBe(202);
    const recoveryId = ((await started.json()) as { data: { id: number } }).data.id;
    first.run.child.kill('SIGKILL');
    await new Promise((resolve) => first.run.child.once('exit', resolve));

    const second = await services.start();
    let recovery: { status: string; queued: number; skipped: number } | undefined;
    // Bounded: the killed process's lease (15 s) runs out before the second takes the recovery up.
    for (let i = 0; i < 1_800 && recovery?.status !== 'completed'; i++) {
      const read = await fetch(`${second.origin}/api/v1/webhook-endpoints/${endpoint}/recoveries/${recoveryId}`, {
        headers,
      });
      recovery = ((await read.json()) as { data: typeof recovery }).data;
      if (recovery?.status !== 'completed') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(recovery).toMatchObject({ status: 'completed', queued: EVENTS, skipped: 0 });
    const perEvent = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => ['event_id', eb.fn.countAll().as('n')])
      .where('endpoint_id', '=', endpoint)
      .groupBy('event_id')
      .execute();
    expect(perEvent.length).toBe(EVENTS);
    expect(perEvent.filter((row) => Number(row.n) !== 1)).toEqual([]);
  });
});
