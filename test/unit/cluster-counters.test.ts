// The primary's rate-limit windows for the workers (server/cluster-counters.ts): fixed windows per key, as
// express-rate-limit's MemoryStore counts them.
import { describe, expect, it } from 'vitest';
import { Windows } from '../../server/cluster-counters.js';

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
