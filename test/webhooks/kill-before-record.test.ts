// kill -9 between an attempt and its record, on the engine under test: the receiver has answered 200, but the
// service (a child process) cannot record the attempt (the test holds the rows' lock: SQLite's write lock, or
// PostgreSQL's row locks) and is killed. The delivery is not lost: started again on the same database, the service
// sends it again with the same webhook-id, and only once the lease the first process took has run out.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { engine, freshDatabase, type TestDatabase } from '../support/database.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { childServices, serviceEnv, subscribeFirstKey } from './child-service.js';

let database: TestDatabase;
let receiver: Receiver;

const env = () =>
  serviceEnv(database.url, {
    // Long enough for the test to take the locks before the receiver answers, however loaded the machine.
    WEBHOOK_TIMEOUT_S: '10',
    WEBHOOK_POLL_S: '0.05',
  });

const services = childServices(env);

/** Holds what recording an attempt needs until `release` is called, which answers the delivery's lease. */
async function holdDeliveryLocks(): Promise<{ release(): Promise<string> }> {
  const lease = 'select claimed_until from webhook_deliveries';
  if (engine === 'sqlite') {
    const Driver = sqliteDriver();
    const connection = new Driver(database.url.slice('sqlite:'.length));
    connection.prepare('begin immediate').run();
    return {
      async release() {
        const row = connection.prepare(lease).get() as { claimed_until: string };
        connection.prepare('rollback').run();
        connection.close();
        return row.claimed_until;
      },
    };
  }
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('begin');
  await client.query('select id from webhook_deliveries for update');
  return {
    async release() {
      const { rows } = await client.query<{ claimed_until: Date }>(lease);
      await client.query('rollback');
      await client.end();
      return new Date(rows[0]?.claimed_until ?? 0).toISOString();
    },
  };
}

async function attemptsLogged(origin: string, endpoint: number, headers: Record<string, string>) {
  const response = await fetch(`${origin}/api/v1/webhook-endpoints/${endpoint}/deliveries`, { headers });
  return ((await response.json()) as { data: Array<{ attempt: number; status: string }> }).data;
}

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await services.stopAll();
  await receiver?.close();
  await database?.drop();
});

describe('kill -9 after an attempt, before its record', () => {
  it('sends the delivery again with the same webhook-id once its lease has run out', async () => {
    const first = await services.start();
    const { headers, endpoint } = await subscribeFirstKey(first, receiver.url);
    // The first answer waits until the test holds the locks.
    let answer = () => {};
    const locked = new Promise<void>((resolve) => {
      answer = resolve;
    });
    receiver.script({ after: locked });
    const created = await fetch(`${first.origin}/api/v1/spaces`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'answered but not recorded' }),
    });
    expect(created.status).toBe(201);

    // The request arrived, so its claim was committed; now nothing can be recorded.
    await receiver.until((r) => r.length >= 1);
    const locks = await holdDeliveryLocks();
    answer();
    let leaseEnds = '';
    try {
      // The receiver answers 200; the service's attempt to record it (in its next claim) gives up on the lock.
      await first.run.waitForOutput(/could not record a unit|failed to run a unit/, 30_000);
      first.run.child.kill('SIGKILL');
      await first.run.exited;
    } finally {
      leaseEnds = await locks.release();
    }
    expect(receiver.received[0]?.answer.after).toBe(locked);
    expect(receiver.received).toHaveLength(1);

    const second = await services.start();
    await receiver.until((r) => r.length >= 2, 60_000);
    const [sent, again] = receiver.received;
    // The same delivery, sent again: the same webhook-id and body, and not before the first process's lease ran out.
    expect(again?.headers['webhook-id']).toBe(sent?.headers['webhook-id']);
    expect(again?.body).toBe(sent?.body);
    expect(again?.at ?? 0).toBeGreaterThanOrEqual(Date.parse(leaseEnds));
    // The log holds the one attempt recorded: the second process's.
    await expect
      .poll(() => attemptsLogged(second.origin, endpoint, headers), { timeout: 30_000 })
      .toMatchObject([{ attempt: 1, status: 'succeeded' }]);
    expect(receiver.received).toHaveLength(2);
    await second.run.stop('SIGTERM');
  }, 180_000);
});
