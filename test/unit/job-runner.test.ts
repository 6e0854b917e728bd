// The job runner's handling of outcomes a job leaves to its next claim (the delivery job's batched records): each
// outcome reaches exactly one claim, with every other outcome finished before it; a claim that fails keeps them
// for the next; stop() hands over what is left with a claim of none. A job of the test's own, no database.
import { describe, expect, it } from 'vitest';
import { LocalWakeups } from '../../server/db/wakeups.js';
import { type Job, startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';

const logger = createLogger('silent');

/** A job of `total` units, each finished with its own number as the outcome; its claims are recorded. */
function countingJob(total: number, { failClaims = 0 } = {}) {
  let next = 0;
  let open: () => void = () => {};
  /** The last unit runs until this opens. */
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let failures = failClaims;
  const claims: Array<{ limit: number; finished: number[] }> = [];
  const job: Job<number, number> = {
    name: 'counting',
    concurrency: 4,
    wakeOn: ['counting'],
    pollMs: 10,
    async claim(limit, _worker, finished = []) {
      if (failures > 0 && finished.length > 0) {
        failures--;
        throw new Error('database away');
      }
      claims.push({ limit, finished: [...finished] });
      const units: number[] = [];
      while (units.length < limit && next < total) units.push(next++);
      return units;
    },
    async run(unit) {
      await new Promise((resolve) => setTimeout(resolve, 1));
      if (unit === total - 1) await gate;
      return unit;
    },
  };
  const recorded = () => claims.flatMap((claim) => claim.finished).sort((a, b) => a - b);
  return { job, claims, recorded, claimedAll: () => next === total, open };
}

const everyUnit = (total: number) => Array.from({ length: total }, (_, i) => i);

async function until(predicate: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('not reached in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('outcomes left to the next claim', () => {
  it('reach exactly one claim each, and stop() hands over the last ones', async () => {
    const { job, claims, recorded, claimedAll, open } = countingJob(40);
    const runner = startJobs([job], { wakeups: new LocalWakeups(), logger });
    // Every unit claimed, and all but the last recorded; the last finishes once the runner is stopping.
    await until(() => claimedAll() && recorded().length === 39);
    const stopped = runner.stop();
    open();
    await stopped;
    expect(recorded()).toEqual(everyUnit(40));
    // The stop's claim records it and asks for nothing.
    expect(claims.at(-1)).toEqual({ limit: 0, finished: [39] });
  });

  it('stay for the next claim when a claim fails', async () => {
    const { job, claims, recorded, open } = countingJob(12, { failClaims: 3 });
    const runner = startJobs([job], { wakeups: new LocalWakeups(), logger });
    open();
    await until(() => recorded().length === 12);
    await runner.stop();
    expect(recorded()).toEqual(everyUnit(12));
    expect(claims.every((claim) => new Set(claim.finished).size === claim.finished.length)).toBe(true);
  });
});

describe('stop() with a deadline', () => {
  it('claims nothing more from the call on, and returns at the deadline while a unit still runs', async () => {
    const { job, claims, claimedAll, recorded, open } = countingJob(8);
    const runner = startJobs([job], { wakeups: new LocalWakeups(), logger });
    // Every unit claimed, all but the last (held by the gate) finished and recorded.
    await until(() => claimedAll() && recorded().length === 7);
    const claimsBefore = claims.length;
    // It returns though the last unit is still running (the gate is not open yet): that unit is left to its claim.
    await runner.stop({ deadlineMs: 50 });
    expect(recorded()).toEqual(everyUnit(7));
    // A wake-up after the stop claims nothing.
    runner.wake('counting');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(claims.length).toBe(claimsBefore);
    // Called again, it answers at once; the unit finishing later is not recorded by this stopped runner.
    await runner.stop();
    open();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(claims.length).toBe(claimsBefore);
  });

  it('without a deadline waits for every unit and records it', async () => {
    const { job, recorded, claimedAll, open } = countingJob(6);
    const runner = startJobs([job], { wakeups: new LocalWakeups(), logger });
    await until(() => claimedAll() && recorded().length === 5);
    const stopped = runner.stop();
    let done = false;
    void stopped.then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(done).toBe(false);
    open();
    await stopped;
    expect(recorded()).toEqual(everyUnit(6));
  });
});
