// The runner's judgement of the RateLimit fields of one answer after another: present together, parseable,
// remaining within the quota, the reset within the window, and the count never going up within one window.
import { describe, expect, it } from 'vitest';
import { parseRateLimitItems } from '../../client/src/rate-limit.js';
import type { Exchange } from '../../scripts/conformance/http.js';
import { RateLimitTracker } from '../../scripts/conformance/rate-limit-fields.js';

const POLICY = '"api-key"; q=10; w=60; pk=:YWJj:';
const answer = (headers: Record<string, string>): Exchange => ({
  request: { method: 'GET', url: 'http://127.0.0.1/api/v1/domains', headers: {} },
  reply: { status: 200, headers, text: '' },
});
const fields = (state: string, policy = POLICY) => answer({ ratelimit: state, 'ratelimit-policy': policy });
/** An answer to a request sent at `sentAt` (ms). */
const sent = (sentAt: number, state: string): Exchange => ({ ...fields(state), sentAt });

describe('one answer', () => {
  it.each([
    ['coherent fields', fields('"api-key"; r=9; t=60'), undefined],
    ['no fields at all (judged at the end)', answer({}), 'absent'],
    ['RateLimit alone', answer({ ratelimit: '"api-key"; r=9; t=60' }), 'RateLimit came without RateLimit-Policy'],
    ['RateLimit-Policy alone', answer({ 'ratelimit-policy': POLICY }), 'RateLimit-Policy came without RateLimit'],
    ['garbage', fields('nine left'), 'RateLimit does not parse as a list of policy items: nine left'],
    ['no r', fields('"api-key"; t=60'), 'RateLimit "api-key" has no integer r (remaining)'],
    ['an unknown policy', fields('"other"; r=1; t=1'), 'RateLimit names "other", which RateLimit-Policy does not'],
    ['r over the quota', fields('"api-key"; r=11; t=60'), 'RateLimit "api-key": r=11 is more than the quota q=10'],
    ['t over the window', fields('"api-key"; r=1; t=61'), 'RateLimit "api-key": t=61 is longer than the window w=60'],
  ])('%s', (_name, exchange, expected) => {
    expect(new RateLimitTracker(0).observe('domains_list', exchange)).toBe(expected);
  });
});

describe('answers in a row', () => {
  it('accepts a count going down, and up again only once the window has ended', () => {
    const tracker = new RateLimitTracker(0);
    expect(tracker.observe('op', fields('"api-key"; r=9; t=2'), 0)).toBeUndefined();
    expect(tracker.observe('op', fields('"api-key"; r=8; t=2'), 100)).toBeUndefined();
    expect(tracker.observe('op', fields('"api-key"; r=9; t=60'), 200)).toBe(
      'RateLimit "api-key": r went up from 8 to 9 within one window',
    );
    expect(tracker.observe('op', fields('"api-key"; r=9; t=60'), 2_500)).toBeUndefined();
  });

  it('knows a window reset from the count going up however late the answers were read (a loaded machine)', () => {
    const tracker = new RateLimitTracker(0);
    // Sent at 0 with 2 s of the window left, but read only at 3 s; the next request, sent after the window
    // ended, gets the whole quota back. Reckoned from when the answer was read, the window would end at 5 s.
    expect(tracker.observe('op', sent(0, '"api-key"; r=2; t=2'), 3_000)).toBeUndefined();
    expect(tracker.observe('op', sent(3_100, '"api-key"; r=9; t=60'), 3_200)).toBeUndefined();
    // Within that new window, going up is still caught.
    expect(tracker.observe('op', sent(3_300, '"api-key"; r=7; t=60'), 3_400)).toBeUndefined();
    expect(tracker.observe('op', sent(3_500, '"api-key"; r=9; t=60'), 3_600)).toMatch(/went up from 7 to 9/);
  });

  it('allows answers in flight together to arrive out of order, by the concurrency', () => {
    const tracker = new RateLimitTracker(4);
    expect(tracker.observe('op', fields('"api-key"; r=5; t=60'), 0)).toBeUndefined();
    expect(tracker.observe('op', fields('"api-key"; r=8; t=60'), 10)).toBeUndefined();
    expect(tracker.observe('op', fields('"api-key"; r=10; t=60'), 20)).toMatch(/went up from 5 to 10/);
  });

  it('counts each policy and partition on its own', () => {
    const tracker = new RateLimitTracker(0);
    expect(tracker.observe('op', fields('"api-key"; r=1; t=60'), 0)).toBeUndefined();
    const other = fields('"api-key"; r=9; t=60', '"api-key"; q=10; w=60; pk=:ZGVm:');
    expect(tracker.observe('op', other, 10)).toBeUndefined();
    const auth = fields('"failed-auth"; r=20; t=60', '"failed-auth"; q=20; w=60');
    expect(tracker.observe('op', auth, 20)).toBeUndefined();
  });
});

describe('parseRateLimitItems', () => {
  it('reads a list of several policies', () => {
    const items = parseRateLimitItems('"day"; r=900; t=3600, "minute";r=2;t=7');
    expect(items?.map((item) => [item.name, Object.fromEntries(item.parameters)])).toEqual([
      ['day', { r: '900', t: '3600' }],
      ['minute', { r: '2', t: '7' }],
    ]);
  });
});
