// The job runner's handling of outcomes a job leaves to `record` (the delivery job's batched records): each outcome
// is recorded exactly once, in the transaction of the claim after it, with every other outcome finished before it;
// a transaction that fails records them one by one; stop() records what is left in a transaction of its own.
// A job of the test's own, on an in-memory database: its units are numbers, its records a list.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../server/db/database.js';
import { LocalWakeups } from '../../server/db/wakeups.js';
import { type Job, startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';

const logger = createLogger('silent');
const db = openDatabase('sqlite::memory:');
afterAll(() => db.destroy());

/** A job of `total` units, each finished with its own number as the outcome; its claims and records are kept. */
function countingJob(total: number, { failRecords = 0, poisoned = -1 } = {}) {
  let next = 0;
  let ran = 0;
  let open: () => void = () => {};
  /** The last unit runs until this opens. */
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let atGate: () => void = () => {};
  /** Resolves once the last unit waits at the gate. */
  const waiting = new Promise<void>((resolve) => {
    atGate = resolve;
  });
  let failures = failRecords;
  /** Each claim: its limit, the outcomes recorded in its transaction (none for a claim without records). */
  const claims: Array<{ limit: number; finished: number[] }> = [];
  /** Each transaction's records, committed or not; `recorded()` reads the committed ones. */
  const records: Array<{ finished: number[]; committed: boolean }> = [];
  let pending: { finished: number[]; committed: boolean } | undefined;
  const job: Job<number, number> = {
    name: 'counting',
    concurrency: 4,
    wakeOn: ['counting'],
    pollMs: 10,
    async claim(limit, _worker, trx) {
      claims.push({ limit, finished: trx && pending ? [...pending.finished] : [] });
      const units: number[] = [];
      while (units.length < limit && next < total) units.push(next++);
      return units;
    },
    async record(finished, trx) {
      expect(trx.isTransaction).toBe(true);
      if (failures > 0 || (finished.includes(poisoned) && finished.length >= 1)) {
        if (failures > 0) failures--;
        throw new Error('cannot record');
      }
      pending = { finished: [...finished], committed: false };
      records.push(pending);
      const mine = pending;
      return () => {
        mine.committed = true;
        pending = undefined;
      };
    },
    async run(unit) {
      await new Promise((resolve) => setImmediate(resolve));
      if (unit === total - 1) {
        atGate();
        await gate;
      }
      ran++;
      return unit;
    },
  };
  const recorded = () =>
    records
      .filter((record) => record.committed)
      .flatMap((record) => record.finished)
      .sort((a, b) => a - b);
  return { job, claims, records, recorded, claimedAll: () => next === total, ran: () => ran, open, waiting };
}

const everyUnit = (total: number) => Array.from({ length: total }, (_, i) => i);
/** Bounded: the runner's loop gets there in a few turns of the event loop. */
const until = (predicate: () => boolean) =>
  vi.waitFor(() => expect(predicate()).toBe(true), { timeout: 20_000, interval: 5 });
/** One turn of the event loop: what the runner does in reaction to a settled promise has happened. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('outcomes left to record', () => {
  it('are each recorded once, in the transaction of the next claim, and stop() records the last ones', async () => {
    const { job, claims, recorded, claimedAll, open, waiting } = countingJob(40);
    const runner = startJobs([job], { db, wakeups: new LocalWakeups(), logger });
    // Every unit claimed, and all but the last recorded; the last finishes once the runner is stopping.
    await waiting;
    await until(() => claimedAll() && recorded().length === 39);
    // Every record was made in a claim's transaction, ahead of the claim.
    expect(claims.flatMap((claim) => claim.finished).sort((a, b) => a - b)).toEqual(everyUnit(39));
    const claimsBefore = claims.length;
    const stopped = runner.stop();
    open();
    await stopped;
    expect(recorded()).toEqual(everyUnit(40));
    // The stop's record is a transaction of its own: no claim.
    expect(claims.length).toBe(claimsBefore);
  });

  it('are recorded one by one when their transaction fails, and one that fails alone is left to its claim', async () => {
    const { job, records, recorded, ran, open } = countingJob(12, { failRecords: 1, poisoned: 5 });
    const runner = startJobs([job], { db, wakeups: new LocalWakeups(), logger });
    open();
    await until(() => ran() === 12 && recorded().length === 11);
    await runner.stop();
    expect(recorded()).toEqual(everyUnit(12).filter((unit) => unit !== 5));
    // No outcome was recorded twice.
    expect(new Set(recorded()).size).toBe(recorded().length);
    // The one-by-one records after the failed one: a transaction each.
    expect(records.some((record) => record.finished.length === 1)).toBe(true);
  });
});

describe('stop() with a deadline', () => {
  it('claims nothing more from the call on, and returns at the deadline while a unit still runs', async () => {
    const { job, claims, claimedAll, recorded, ran, open, waiting } = countingJob(8);
    const runner = startJobs([job], { db, wakeups: new LocalWakeups(), logger });
    // Every unit claimed, all but the last (held by the gate) finished and recorded.
    await waiting;
    await until(() => claimedAll() && recorded().length === 7);
    const claimsBefore = claims.length;
    // It returns though the last unit is still running (the gate is not open yet): that unit is left to its claim.
    await runner.stop({ deadlineMs: 50 });
    expect(recorded()).toEqual(everyUnit(7));
    // A wake-up after the stop claims nothing (a claim would have started at once, within the call).
    runner.wake('counting');
    expect(claims.length).toBe(claimsBefore);
    // Called again, it answers at once; the unit finishing later is not recorded by this stopped runner.
    await runner.stop();
    open();
    await until(() => ran() === 8);
    await turn();
    expect(claims.length).toBe(claimsBefore);
    expect(recorded()).toEqual(everyUnit(7));
  });

  it('without a deadline waits for every unit and records it', async () => {
    const { job, recorded, claimedAll, open, waiting } = countingJob(6);
    const runner = startJobs([job], { db, wakeups: new LocalWakeups(), logger });
    await waiting;
    await until(() => claimedAll() && recorded().length === 5);
    let done = false;
    const stopped = runner.stop().then(() => {
      done = true;
    });
    // The last unit is held at the gate: the stop cannot have returned, however long it is given.
    await turn();
    expect(done).toBe(false);
    open();
    await stopped;
    expect(recorded()).toEqual(everyUnit(6));
  });
});
