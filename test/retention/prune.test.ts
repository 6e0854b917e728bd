// Retention's bounded batches, on both engines: each prune function deletes exactly the rows past retention, at
// most a batch at a time (a short batch says nothing more is due), and what the API shows afterwards.
import { describe, expect, it } from 'vitest';
import { pruneVerifyWindows } from '../../server/domains/checks.js';
import { pruneEvents } from '../../server/events/repository.js';
import { pruneIdempotencyKeys } from '../../server/idempotency/repository.js';
import { pruneDeliveries } from '../../server/webhooks/repository.js';
import { serverForFile } from '../support/file-server.js';

const { server, account } = await serverForFile('retention');
const db = server.db;
const accountId = Number(
  (await db.selectFrom('accounts').select('id').where('name', '=', 'retention').executeTakeFirstOrThrow()).id,
);

const NOW = Date.now();
const DAY = 86_400_000;
const CUTOFF = new Date(NOW - 30 * DAY);
const at = (msFromCutoff: number) => new Date(CUTOFF.getTime() + msFromCutoff).toISOString();

/** Runs `prune` batch after batch until one comes back short; the batches' sizes. */
async function drain(prune: (batch: { before: Date; batchSize: number }) => Promise<number>, batchSize: number) {
  const batches: number[] = [];
  for (;;) {
    const deleted = await prune({ before: CUTOFF, batchSize });
    batches.push(deleted);
    if (deleted < batchSize || batches.length > 100) return batches;
  }
}

let spaces = 0;
/** An event made through the API (a space stored), dated `createdAt`; its row id and public id. */
async function event(createdAt: string): Promise<{ id: number; publicId: string }> {
  const { response } = await account.client.POST('/spaces', { body: { name: `retention-${++spaces}` } });
  if (response.status !== 201) throw new Error(`store answered ${response.status}`);
  const row = await db
    .selectFrom('events')
    .select(['id', 'public_id'])
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  await db.updateTable('events').set({ created_at: createdAt }).where('id', '=', row.id).execute();
  return { id: Number(row.id), publicId: row.public_id };
}

describe('pruneDeliveries and pruneEvents', () => {
  it('delete the finished delivery log, then the events, from before the cutoff and nothing after it', async () => {
    const endpoint = await db
      .insertInto('webhook_endpoints')
      .values({
        account_id: accountId,
        url: 'https://receiver.example/hook',
        enabled_events: '["*"]',
        // Disabled, so that the events made below queue nothing for it: only the deliveries made here exist.
        status: 'disabled',
        disabled_reason: 'manual',
        secret: 'whsec_retention',
        created_at: at(-DAY),
        updated_at: at(-DAY),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const oldEvents: number[] = [];
    for (let i = 0; i < 7; i++) oldEvents.push((await event(at(-(i + 1) * 60_000))).id);
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await event(at((i + 1) * 60_000)));
    const newEvents = made.map((each) => each.id);
    const delivery = async (
      eventId: number,
      state: 'pending' | 'succeeded' | 'failed' | 'cancelled',
      createdAt: string,
    ) => {
      const row = await db
        .insertInto('webhook_deliveries')
        .values({
          endpoint_id: Number(endpoint.id),
          event_id: eventId,
          state,
          next_attempt_at: createdAt,
          created_at: createdAt,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      await db
        .insertInto('webhook_attempts')
        .values({
          delivery_id: Number(row.id),
          endpoint_id: Number(endpoint.id),
          attempt: 1,
          attempted_at: createdAt,
          status: state === 'succeeded' ? 'succeeded' : 'failed',
          latency_ms: 5,
        })
        .execute();
      return Number(row.id);
    };
    const states = ['succeeded', 'failed', 'cancelled', 'succeeded', 'failed'] as const;
    const oldFinished = await Promise.all(states.map((state, i) => delivery(oldEvents[i] ?? 0, state, at(-60_000))));
    const oldPending = await delivery(oldEvents[5] ?? 0, 'pending', at(-60_000));
    const kept = [oldPending];
    for (const id of newEvents) kept.push(await delivery(id, 'succeeded', at(60_000)));

    expect(await drain((batch) => pruneDeliveries(db, batch), 2)).toEqual([2, 2, 1]);
    const deliveries = await db.selectFrom('webhook_deliveries').select('id').execute();
    expect(deliveries.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(kept);
    const attempts = await db.selectFrom('webhook_attempts').select('delivery_id').execute();
    expect(attempts.map((row) => Number(row.delivery_id)).sort((a, b) => a - b)).toEqual(kept);
    expect(oldFinished.every((id) => !kept.includes(id))).toBe(true);

    expect(await drain((batch) => pruneEvents(db, batch), 3)).toEqual([3, 3, 1]);
    const left = await db.selectFrom('events').select('id').where('account_id', '=', accountId).execute();
    expect(left.map((row) => Number(row.id)).sort((a, b) => a - b)).toEqual(newEvents);
    // The old event's pending delivery went with it (the cascade); the new events' deliveries stay.
    const after = await db.selectFrom('webhook_deliveries').select('event_id').execute();
    expect(after.map((row) => Number(row.event_id)).sort((a, b) => a - b)).toEqual(newEvents);

    // What the API lists: the events after the cutoff, and no more.
    const { data } = await account.client.GET('/events', { params: { query: { per_page: 100 } } });
    expect(data?.data.map((each) => each.id).sort()).toEqual(made.map((each) => each.publicId).sort());
  });

  it('delete nothing when nothing is past retention', async () => {
    expect(await pruneDeliveries(db, { before: new Date(0), batchSize: 10 })).toBe(0);
    expect(await pruneEvents(db, { before: new Date(0), batchSize: 10 })).toBe(0);
  });
});

describe('pruneIdempotencyKeys', () => {
  it('deletes the keys made before the cutoff, a batch at a time, and keeps the others', async () => {
    const key = (name: string, createdAt: string) => ({
      account_id: accountId,
      key: name,
      fingerprint: 'f',
      status: 201,
      headers: '{}',
      body: '{}',
      created_at: createdAt,
    });
    await db
      .insertInto('idempotency_keys')
      .values([
        key('old-1', at(-3_600_000)),
        key('old-2', at(-1)),
        key('old-3', at(-DAY)),
        key('new-1', at(1)),
        key('new-2', at(DAY)),
      ])
      .execute();
    expect(await drain((batch) => pruneIdempotencyKeys(db, batch), 2)).toEqual([2, 1]);
    const left = await db.selectFrom('idempotency_keys').select('key').where('account_id', '=', accountId).execute();
    expect(left.map((row) => row.key).sort()).toEqual(['new-1', 'new-2']);
  });
});

describe('pruneVerifyWindows', () => {
  it('deletes the verify windows that started before the cutoff', async () => {
    const window = (name: string, startedAt: string) => ({
      account_id: accountId,
      name,
      started_at: startedAt,
      count: 1,
    });
    await db
      .insertInto('domain_verify_windows')
      .values([window('a.example', at(-1)), window('b.example', at(-DAY)), window('c.example', at(1))])
      .execute();
    expect(await drain((batch) => pruneVerifyWindows(db, batch), 5)).toEqual([2]);
    const left = await db
      .selectFrom('domain_verify_windows')
      .select('name')
      .where('account_id', '=', accountId)
      .execute();
    expect(left.map((row) => row.name)).toEqual(['c.example']);
  });
});
