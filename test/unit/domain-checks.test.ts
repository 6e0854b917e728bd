// The rules of domain states as tables: what an answer shows, what a check does to a state and to the next
// check, the per-domain verify window and the token bucket of DNS queries.
import { describe, expect, it } from 'vitest';
import {
  afterCheck,
  type CheckSchedule,
  countVerify,
  type DomainStatus,
  inTestZone,
  type LookupResult,
  type ObservationCode,
  observe,
  uncheckableName,
} from '../../server/domains/check-rules.js';
import { TokenBucket } from '../../server/domains/token-bucket.js';

const TOKEN = 'AAAAAAAAAAAAAAAAAAAAAA';
const OURS = `dss-verify=${TOKEN}`;
const NAME = 'shop.example.com';

describe('observe', () => {
  const cases: Array<[string, LookupResult, ObservationCode, RegExp]> = [
    ['our value alone', { values: [OURS] }, 'found', /Found/],
    ['our value among others', { values: ['v=spf1 -all', OURS] }, 'found', /Found/],
    ['no records', { values: [] }, 'missing', /no TXT record/],
    ['NXDOMAIN', { error: 'ENOTFOUND' }, 'missing', /does not exist \(NXDOMAIN\)/],
    ['no TXT at the name', { error: 'ENODATA' }, 'missing', /no TXT record at _dss-challenge\.shop\.example\.com/],
    ['another value', { values: ['dss-verify=other'] }, 'wrong_value', /another value/],
    ['our value with a space', { values: [`${OURS} `] }, 'wrong_value', /exactly/],
    ['several without ours', { values: ['a', 'b'] }, 'several_values', /2 TXT records/],
    ['SERVFAIL', { error: 'ESERVFAIL' }, 'lookup_failed', /SERVFAIL/],
    ['a timeout', { error: 'ETIMEOUT' }, 'lookup_failed', /timeout/],
    ['REFUSED', { error: 'EREFUSED' }, 'lookup_failed', /REFUSED/],
    ['an unknown error', { error: 'EWHATEVER' }, 'lookup_failed', /EWHATEVER/],
    ['a name too long for DNS', { error: 'EBADNAME' }, 'missing', /not a valid DNS name/],
  ];
  it.each(cases)('%s: %s', (_case, result, code, message) => {
    const observation = observe(result, NAME, TOKEN);
    expect(observation.code).toBe(code);
    expect(observation.message).toMatch(message);
  });

  it('bounds the values it shows: 5 of 200, each cut to 100 characters', () => {
    const values = Array.from({ length: 200 }, (_, i) => `${i}`.padEnd(10_000, 'x'));
    const observation = observe({ values }, NAME, TOKEN);
    expect(observation.code).toBe('several_values');
    expect(observation.values).toHaveLength(5);
    expect(observation.values.every((value) => value.length === 101 && value.endsWith('…'))).toBe(true);
    expect(observation.message.length).toBeLessThan(500);
  });
});

const MIN = 60_000;
const HOUR = 60 * MIN;
const SCHEDULE: CheckSchedule = {
  activeIntervalMs: HOUR,
  misconfiguredIntervalMs: 5 * MIN,
  graceMs: 72 * HOUR,
  pendingExpiryMs: 7 * 24 * HOUR,
  pendingFirstMs: MIN,
  pendingMaxMs: HOUR,
  retryMs: 5 * MIN,
};
const NOW = new Date('2026-11-26T12:00:00.000Z');
const ago = (ms: number) => new Date(NOW.getTime() - ms);

describe('afterCheck', () => {
  // [status, in it since, observation] -> [new status, next check in ms from now or null, verified]
  const cases: Array<[DomainStatus, number, ObservationCode, DomainStatus, number | null, boolean]> = [
    ['pending', 0, 'found', 'active', HOUR, true],
    ['pending', 0, 'missing', 'pending', MIN, false],
    ['pending', 4 * MIN, 'missing', 'pending', 4 * MIN, false],
    ['pending', 5 * HOUR, 'wrong_value', 'pending', HOUR, false],
    ['pending', 7 * 24 * HOUR - 10 * MIN, 'missing', 'pending', 10 * MIN, false],
    ['pending', 7 * 24 * HOUR, 'missing', 'expired', null, false],
    ['pending', 0, 'held_elsewhere', 'pending', MIN, false],
    ['pending', 5 * HOUR, 'lookup_failed', 'pending', 5 * MIN, false],
    ['pending', 7 * 24 * HOUR - MIN, 'lookup_failed', 'pending', MIN, false],
    // A claim whose lookups keep failing expires with the others, rather than being retried for ever.
    ['pending', 7 * 24 * HOUR, 'lookup_failed', 'expired', null, false],
    ['pending', 30 * 24 * HOUR, 'lookup_failed', 'expired', null, false],
    ['active', HOUR, 'found', 'active', HOUR, true],
    ['active', HOUR, 'missing', 'misconfigured', 5 * MIN, false],
    ['active', HOUR, 'several_values', 'misconfigured', 5 * MIN, false],
    ['active', HOUR, 'lookup_failed', 'active', 5 * MIN, false],
    ['misconfigured', HOUR, 'found', 'active', HOUR, true],
    ['misconfigured', HOUR, 'missing', 'misconfigured', 5 * MIN, false],
    ['misconfigured', 72 * HOUR - MIN, 'missing', 'misconfigured', MIN, false],
    ['misconfigured', 72 * HOUR, 'wrong_value', 'expired', null, false],
    // Past the grace, a failed lookup cannot tell whether the record is back: backed off, never due at once.
    ['misconfigured', 72 * HOUR, 'lookup_failed', 'misconfigured', 5 * MIN, false],
    ['misconfigured', 100 * HOUR, 'lookup_failed', 'misconfigured', 5 * MIN, false],
    ['expired', HOUR, 'found', 'active', HOUR, true],
    ['expired', HOUR, 'missing', 'expired', null, false],
    ['claimed_elsewhere', HOUR, 'found', 'active', HOUR, true],
    ['claimed_elsewhere', HOUR, 'held_elsewhere', 'claimed_elsewhere', null, false],
    ['claimed_elsewhere', HOUR, 'lookup_failed', 'claimed_elsewhere', null, false],
  ];
  it.each(cases)('%s for %i ms, %s: %s, next in %s ms', (status, since, code, to, next, verified) => {
    const outcome = afterCheck({ status, since: ago(since) }, code, NOW, SCHEDULE);
    expect(outcome.status).toBe(to);
    expect(outcome.nextCheckAt === null ? null : outcome.nextCheckAt.getTime() - NOW.getTime()).toBe(next);
    expect(outcome.verified).toBe(verified);
    // A new state starts now; an unchanged one keeps its start (the expiry and the grace period count from it).
    expect(outcome.since.getTime()).toBe(to === status ? ago(since).getTime() : NOW.getTime());
  });

  it('never demotes on a failed lookup, whatever the state', () => {
    for (const status of ['pending', 'active', 'misconfigured', 'expired', 'claimed_elsewhere'] as const) {
      expect(afterCheck({ status, since: ago(HOUR) }, 'lookup_failed', NOW, SCHEDULE).status).toBe(status);
    }
  });

  it('never schedules the next check in the past or now, whatever the state, answer and age', () => {
    const statuses = ['pending', 'active', 'misconfigured', 'expired', 'claimed_elsewhere'] as const;
    const codes: ObservationCode[] = ['found', 'missing', 'wrong_value', 'several_values', 'lookup_failed'];
    const ages = [0, 1, MIN, HOUR, 72 * HOUR - 1, 72 * HOUR, 7 * 24 * HOUR - 1, 7 * 24 * HOUR, 365 * 24 * HOUR];
    const inThePast: string[] = [];
    for (const status of statuses) {
      for (const code of [...codes, 'held_elsewhere' as const]) {
        for (const age of ages) {
          // Also on a schedule whose first pending wait is 0 (a store due at once, as tests set it).
          for (const schedule of [SCHEDULE, { ...SCHEDULE, pendingFirstMs: 0 }]) {
            const { nextCheckAt } = afterCheck({ status, since: ago(age) }, code, NOW, schedule);
            if (nextCheckAt !== null && nextCheckAt.getTime() <= NOW.getTime()) {
              inThePast.push(`${status} ${age} ${code} ${schedule.pendingFirstMs}`);
            }
          }
        }
      }
    }
    expect(inThePast).toEqual([]);
  });

  it('waits at least a second before checking a new pending claim again, when its first wait is 0', () => {
    const schedule = { ...SCHEDULE, pendingFirstMs: 0 };
    for (const code of ['missing', 'lookup_failed'] as const) {
      const { nextCheckAt } = afterCheck({ status: 'pending', since: ago(5) }, code, NOW, schedule);
      expect((nextCheckAt?.getTime() ?? 0) - NOW.getTime()).toBe(1000);
    }
  });
});

describe('countVerify', () => {
  const QUOTA = { limit: 3, windowSeconds: 60 };
  it.each([
    ['the first verify', { startedAt: null, count: 0 }, { startedAt: NOW, count: 1 }],
    ['one more in the window', { startedAt: ago(10_000), count: 2 }, { startedAt: ago(10_000), count: 3 }],
    ['a spent window', { startedAt: ago(10_000), count: 3 }, { retryAfterSeconds: 50 }],
    ['a spent window about to end', { startedAt: ago(59_900), count: 3 }, { retryAfterSeconds: 1 }],
    ['a window that ended', { startedAt: ago(60_000), count: 3 }, { startedAt: NOW, count: 1 }],
  ])('%s', (_case, window, expected) => {
    expect(countVerify(window, QUOTA, NOW)).toEqual(expected);
  });
});

describe('uncheckableName', () => {
  const labels = (length: number) => {
    const parts: string[] = [];
    for (let left = length; left > 0; left -= 64) parts.push('a'.repeat(Math.min(63, left - (left > 63 ? 1 : 0))));
    return parts.join('.');
  };
  it.each([
    ['238 characters: its challenge name has 253', 238, false],
    ['239 characters: its challenge name has 254', 239, true],
    ['253 characters', 253, true],
  ])('%s', (_case, length, refused) => {
    const name = `${labels(length - 4)}.com`;
    expect(name).toHaveLength(length);
    expect(uncheckableName(name) !== undefined).toBe(refused);
  });

  it('says the limit and why', () => {
    expect(uncheckableName(`${labels(246)}.com`)).toMatch(/at most 238 characters .*_dss-challenge\.<name>.* 253/);
  });
});

describe('inTestZone', () => {
  it.each([
    ['dss-test.example', true],
    ['shop.alice.dss-test.example', true],
    ['dss-test.example.com', false],
    ['notdss-test.example', false],
  ])('%s: %s', (name, expected) => {
    expect(inTestZone(name)).toBe(expected);
  });
});

describe('TokenBucket', () => {
  it('gives at most its rate at once, then refills at that rate', () => {
    let now = 0;
    const bucket = new TokenBucket(20, () => now);
    expect(bucket.available()).toBe(20);
    bucket.take(20);
    expect(bucket.available()).toBe(0);
    expect(bucket.msUntilNext()).toBe(50);
    now = 500;
    expect(bucket.available()).toBe(10);
    now = 60_000;
    expect(bucket.available()).toBe(20);
  });
});
