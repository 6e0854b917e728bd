// SIGTERM while webhook attempts hang: the runner stops claiming at the signal and stops within the shutdown's
// budget (DRAIN_DELAY_S + SHUTDOWN_GRACE_S), not after WEBHOOK_TIMEOUT_S, so a supervisor's grace (30 s in compose
// and the systemd unit) is never what ends the process. The attempts it abandons are taken again once their claim
// runs out: a healthy receiver then gets every change, each acknowledged once. Their claims (WEBHOOK_TIMEOUT_S + 5 s)
// are checked in the database, then run out by moving them to the past rather than by waiting a minute.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, toIso } from '../../server/db/database.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { childServices, serviceEnv, subscribeFirstKey } from './child-service.js';

const CHANGES = 5;
/** An attempt may take a minute: longer than any supervisor waits. */
const TIMEOUT_S = 60;
/** A delivery's claim: its attempt's time limit and 5 s to record it (webhooks/deliveries.ts). */
const LEASE_MS = TIMEOUT_S * 1000 + 5_000;
/** Deliveries in flight at once to the endpoint: the rest stay queued behind the hanging ones. */
const IN_FLIGHT = 2;
/** compose's stop_grace_period and the unit's TimeoutStopSec: the process must be gone well before. */
const SUPERVISOR_GRACE_MS = 30_000;
let database: TestDatabase;
let receiver: Receiver;

const env = () =>
  serviceEnv(database.url, {
    WEBHOOK_TIMEOUT_S: String(TIMEOUT_S),
    WEBHOOK_POLL_S: '0.05',
    WEBHOOK_ENDPOINT_CONCURRENCY: String(IN_FLIGHT),
    DRAIN_DELAY_S: '0',
    SHUTDOWN_GRACE_S: '2',
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

describe('SIGTERM with attempts hanging', () => {
  it('exits within the shutdown budget, and a healthy receiver then gets every change once', async () => {
    const first = await services.start();
    const { headers } = await subscribeFirstKey(first, receiver.url);
    // The first attempts hang until the test ends: no answer, ever, from this receiver to the first process.
    receiver.script(...Array.from({ length: IN_FLIGHT }, () => ({ after: new Promise(() => {}) })));
    const claimedFrom = Date.now();
    for (let i = 0; i < CHANGES; i++) {
      const created = await fetch(`${first.origin}/api/v1/spaces`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: `stopping ${i}` }),
      });
      expect(created.status).toBe(201);
    }
    await receiver.until((r) => r.length >= IN_FLIGHT);

    const signalled = Date.now();
    const exit = await first.run.stop('SIGTERM', SUPERVISOR_GRACE_MS);
    // Gone before a supervisor would kill it (before the fix: after WEBHOOK_TIMEOUT_S, 60 s), and it says what it left.
    expect(Date.now() - signalled).toBeLessThan(SUPERVISOR_GRACE_MS);
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/background job stopped with units still running/);
    // It claimed nothing after the signal: only the hanging ones were ever sent.
    expect(receiver.received).toHaveLength(IN_FLIGHT);

    // The abandoned attempts are still claimed, each for WEBHOOK_TIMEOUT_S + 5 s from its claim (made after the
    // first create, before the receiver had it). Their claims then run out: moved to the past, as a minute would.
    const db = openDatabase(database.url);
    try {
      const claimed = await db
        .selectFrom('webhook_deliveries')
        .select(['id', 'claimed_until'])
        .where('claimed_until', 'is not', null)
        .execute();
      expect(claimed).toHaveLength(IN_FLIGHT);
      const sentBy = Math.max(...receiver.received.map((r) => r.at));
      for (const { claimed_until } of claimed) {
        const until = Date.parse(toIso(claimed_until as string | Date));
        expect(until).toBeGreaterThanOrEqual(claimedFrom + LEASE_MS);
        expect(until).toBeLessThanOrEqual(sentBy + LEASE_MS);
      }
      const past = new Date(Date.now() - 1_000).toISOString();
      await db
        .updateTable('webhook_deliveries')
        .set({ claimed_until: past })
        .where('claimed_until', 'is not', null)
        .execute();
    } finally {
      await db.destroy();
    }

    // The receiver answers 200 from now on (its script is spent).
    const second = await services.start();
    const events = (await (
      await fetch(`${second.origin}/api/v1/events?type=space.created&per_page=100`, { headers })
    ).json()) as { data: Array<{ id: string }> };
    const ids = events.data.map((event) => event.id).sort();
    expect(ids).toHaveLength(CHANGES);
    const acknowledged = () =>
      receiver.received.filter((r) => r.answer.after === undefined).map((r) => String(r.headers['webhook-id']));
    // The queued ones, and the abandoned ones now that their claims have run out.
    await receiver.until(() => new Set(acknowledged()).size === CHANGES, 60_000);
    expect(acknowledged().sort()).toEqual(ids);
    await second.run.stop('SIGTERM');
  }, 240_000);
});
