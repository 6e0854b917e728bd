// Attempts recorded in batches, on the engine under test: the delivery job records every attempt finished since
// the last claim in the transaction of the next, and what one attempt of a batch does to its endpoint the next one
// sees; a delivery whose claim ran out is not recorded by the process that lost it, one cancelled meanwhile stays
// cancelled. The job's functions run by hand here (no runner), against real rows; the sends are not made.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/logger.js';
import { type FinishedAttempt, recordAttempts } from '../../server/webhooks/attempt-records.js';
import { type ClaimedDelivery, claimDeliveries, deliveryJob } from '../../server/webhooks/deliveries.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

const logger = createLogger('silent');
const LEASE_MS = 60_000;

function finishedWith(
  delivery: ClaimedDelivery,
  status: number | undefined,
  failingSince: string | Date | null = null,
): FinishedAttempt {
  return {
    delivery,
    endpointId: delivery.endpoint_id,
    attemptedAt: new Date().toISOString(),
    result: status === undefined ? { error: 'connection failed', latencyMs: 3 } : { status, body: 'ok', latencyMs: 2 },
    failingSince,
    final: false,
  };
}

describe('attempts recorded in batches', () => {
  let server: TestServer;
  let account: TestAccount;
  let endpoint: number;

  const deliveries = () =>
    server.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'state', 'attempts', 'claimed_by'])
      .where('endpoint_id', '=', endpoint)
      .orderBy('id')
      .execute();
  const attempts = () =>
    server.db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'attempt', 'status', 'response_status'])
      .where('endpoint_id', '=', endpoint)
      .orderBy('id')
      .execute();
  const failingSince = async () =>
    (
      await server.db
        .selectFrom('webhook_endpoints')
        .select('failing_since')
        .where('id', '=', endpoint)
        .executeTakeFirstOrThrow()
    ).failing_since;

  beforeAll(async () => {
    // No job runs: the rows stay as the calls below leave them.
    server = await startServer();
    account = await server.account();
    const { data } = await account.json.POST('/webhook-endpoints', {
      body: { url: 'http://127.0.0.1:9/batch', enabled_events: ['space.created'] },
    });
    endpoint = data?.data.id ?? 0;
    for (let i = 0; i < 6; i++) {
      const { response } = await account.client.POST('/spaces', { body: { name: `batch ${i}` } });
      expect(response.status).toBe(201);
    }
  });
  afterAll(async () => {
    await server?.close();
  });

  it('records a batch in one transaction: each outcome, the log in order, the endpoint as the batch leaves it', async () => {
    const settings = { ...server.webhooks, endpointConcurrency: 4, accountConcurrency: 4 };
    const claimed = await claimDeliveries(server.db, { limit: 4, worker: 'one', leaseMs: LEASE_MS }, settings);
    expect(claimed).toHaveLength(4);
    const [failed, succeeded, lost, cancelled] = claimed as [
      ClaimedDelivery,
      ClaimedDelivery,
      ClaimedDelivery,
      ClaimedDelivery,
    ];
    // Meanwhile: one claim ran out and another process took the delivery; one delivery was cancelled.
    await server.db.updateTable('webhook_deliveries').set({ claimed_by: 'two' }).where('id', '=', lost.id).execute();
    await server.db
      .updateTable('webhook_deliveries')
      .set({ state: 'cancelled' })
      .where('id', '=', cancelled.id)
      .execute();

    const outcomes = await server.db
      .transaction()
      .execute((trx) =>
        recordAttempts(
          trx,
          server.webhooks,
          'one',
          [
            finishedWith(failed, 500),
            finishedWith(succeeded, 200),
            finishedWith(lost, 200),
            finishedWith(cancelled, 200),
          ],
          { random: () => 0.5, logger },
        ),
      );

    expect(outcomes).toEqual(['retrying', 'succeeded', undefined, 'cancelled']);
    const byId = new Map((await deliveries()).map((row) => [Number(row.id), row]));
    expect(byId.get(failed.id)).toMatchObject({ state: 'pending', attempts: 1, claimed_by: null });
    expect(byId.get(succeeded.id)).toMatchObject({ state: 'succeeded', attempts: 1, claimed_by: null });
    // The process that lost the claim records nothing of it: the other one will.
    expect(byId.get(lost.id)).toMatchObject({ state: 'pending', attempts: 0, claimed_by: 'two' });
    expect(byId.get(cancelled.id)).toMatchObject({ state: 'cancelled', attempts: 1, claimed_by: null });
    expect((await attempts()).map((row) => [Number(row.delivery_id), row.status, Number(row.response_status)])).toEqual(
      [
        [failed.id, 'failed', 500],
        [succeeded.id, 'succeeded', 200],
        [cancelled.id, 'succeeded', 200],
      ],
    );
    // The failure marked the endpoint failing, and the success after it in the same batch cleared that again
    // (both attempts were made while it was not failing).
    expect(await failingSince()).toBeNull();
  });

  it("records the finished attempts in the claim's transaction, and claims the places they free", async () => {
    await server.db
      .updateTable('webhook_deliveries')
      .set({ claimed_by: null, claimed_until: null })
      .where('endpoint_id', '=', endpoint)
      .execute();
    // One delivery in flight at a time for this endpoint.
    const job = deliveryJob(
      server.db,
      { ...server.webhooks, endpointConcurrency: 1, retryScheduleS: [] },
      { logger, random: () => 0.5 },
    );
    const [first] = await job.claim(8, 'three');
    expect(first).toBeDefined();
    // Its bound is reached: nothing more until its attempt is recorded.
    expect(await job.claim(8, 'three')).toEqual([]);
    const pendingBefore = (await deliveries()).filter((row) => row.state === 'pending').length;

    // As the runner does it: the finished attempt recorded, then the claim, in one transaction.
    const next = await server.db.transaction().execute(async (trx) => {
      await job.record?.([finishedWith(first as ClaimedDelivery, undefined)], trx, 'three');
      return job.claim(8, 'three', trx);
    });

    // The failed attempt was the last the (empty) schedule allows: recorded, the delivery failed, and its place taken
    // by the endpoint's next delivery in the same transaction.
    expect(next).toHaveLength(1);
    expect(next[0]?.id).not.toBe(first?.id);
    const rows = new Map((await deliveries()).map((row) => [Number(row.id), row]));
    expect(rows.get(first?.id ?? 0)).toMatchObject({ state: 'failed', attempts: 1, claimed_by: null });
    expect(rows.get(next[0]?.id ?? 0)).toMatchObject({ state: 'pending', claimed_by: 'three' });
    expect([...rows.values()].filter((row) => row.state === 'pending').length).toBe(pendingBefore - 1);
    expect((await attempts()).at(-1)).toMatchObject({ delivery_id: first?.id, attempt: 1, status: 'failed' });
    expect(await failingSince()).not.toBeNull();

    // At stop the runner records what is left in a transaction of its own, claiming nothing; a success of an
    // attempt made while the endpoint was failing clears that.
    const failing = await failingSince();
    await server.db.transaction().execute(async (trx) => {
      await job.record?.([finishedWith(next[0] as ClaimedDelivery, 200, failing)], trx, 'three');
    });
    expect((await deliveries()).find((row) => Number(row.id) === next[0]?.id)).toMatchObject({
      state: 'succeeded',
      claimed_by: null,
    });
    expect(await failingSince()).toBeNull();
  });
});
