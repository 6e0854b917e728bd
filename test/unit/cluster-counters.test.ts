// The primary's rate-limit windows for the workers (server/cluster-counters.ts): fixed windows per key, as
// express-rate-limit's MemoryStore counts them; and a worker's share of a quota while the primary does not answer,
// its own count turned into the hits the limiter compares with the quota. The stalled primary itself, over the
// real IPC channel, is in test/service/workers.test.ts.
import { describe, expect, it } from 'vitest';
import { fallbackHits } from '../../server/cluster-counters.js';
import { Windows } from '../../server/quota.js';

describe('the primary’s counter windows', () => {
  it.each([
    { steps: ['increment', 'increment', 'increment'], want: { totalHits: 3, resetAt: 1_060_000 } },
    { steps: ['increment', 'decrement', 'increment'], want: { totalHits: 1, resetAt: 1_060_000 } },
    { steps: ['decrement', 'get'], want: { totalHits: 0 } },
    { steps: ['increment', 'increment', 'reset', 'get'], want: { totalHits: 0 } },
    { steps: ['get'], want: { totalHits: 0 } },
  ] as const)('$steps ends at $want', ({ steps, want }) => {
    const windows = new Windows();
    let last: unknown;
    for (const step of steps) last = windows.apply(step, 'key', 60_000, 1_000_000);
    expect(last).toEqual(want);
  });

  it('starts a new window once the old one has ended, and forgets ended windows', () => {
    const windows = new Windows();
    windows.apply('increment', 'a', 60_000, 0);
    windows.apply('increment', 'b', 120_000, 0);
    expect(windows.apply('increment', 'a', 60_000, 60_000)).toEqual({ totalHits: 1, resetAt: 120_000 });
    windows.prune(120_000);
    expect(windows.size).toBe(0);
  });

  it('counts each key on its own', () => {
    const windows = new Windows();
    windows.apply('increment', 'a', 60_000, 0);
    expect(windows.apply('increment', 'b', 60_000, 0)).toEqual({ totalHits: 1, resetAt: 60_000 });
  });
});

/** The requests one worker serves alone: the limiter refuses once the hits are above the limit. */
function served(limit: number, workers: number): number {
  let own = 0;
  while (fallbackHits(own + 1, limit, workers) <= limit) own++;
  return own;
}

describe('a worker’s share of a quota while the primary is silent', () => {
  it.each([
    { limit: 30, workers: 2, share: 15 },
    { limit: 600, workers: 4, share: 150 },
    { limit: 20, workers: 3, share: 7 },
    { limit: 1, workers: 2, share: 1 },
    { limit: 5, workers: 8, share: 1 },
    { limit: 7, workers: 1, share: 7 },
  ])('$limit requests over $workers workers: $share each', ({ limit, workers, share }) => {
    expect(served(limit, workers)).toBe(share);
  });

  it('never serves a key more than its quota plus one per worker, and never refuses it all', () => {
    for (let workers = 1; workers <= 16; workers++) {
      for (let limit = 1; limit <= 200; limit++) {
        const each = served(limit, workers);
        expect(each).toBeGreaterThanOrEqual(1);
        expect(each * workers).toBeLessThan(limit + workers);
        expect(each * workers).toBeGreaterThanOrEqual(limit);
      }
    }
  });

  it('counts no hits as none', () => {
    expect(fallbackHits(0, 30, 2)).toBe(0);
  });
});
