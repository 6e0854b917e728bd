// The webhook rules as tables: the retry schedule and its jitter, Retry-After, the safe-target address
// classification, and the Standard Webhooks signature (checked with the standardwebhooks package).
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { idCursor, idCursorProblem, readIdCursor } from '../../server/http/conventions/id-cursor.js';
import { ADDRESS_RULE, isSafeAddress, urlProblem } from '../../server/webhooks/safe-target.js';
import { parseRetryAfter, retryDelayMs, STANDARD_RETRY_SCHEDULE_S } from '../../server/webhooks/schedule.js';
import { newSecret, sign, webhookHeaders } from '../../server/webhooks/signature.js';
import { SAFE_TARGETS, UNSAFE_TARGETS } from '../support/unsafe-targets.js';

describe('retry schedule', () => {
  it('is the Standard Webhooks schedule after the immediate first attempt', () => {
    expect(STANDARD_RETRY_SCHEDULE_S).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
  });

  it.each([
    // failed attempts, random, retry-after, expected ms
    { failed: 1, random: 0, retryAfter: undefined, want: 4_000 },
    { failed: 1, random: 0.5, retryAfter: undefined, want: 5_000 },
    { failed: 1, random: 0.999999, retryAfter: undefined, want: 6_000 },
    { failed: 2, random: 0.5, retryAfter: undefined, want: 300_000 },
    { failed: 7, random: 0.5, retryAfter: undefined, want: 36_000_000 },
    { failed: 8, random: 0.5, retryAfter: undefined, want: undefined },
    // Retry-After longer than the schedule's delay wins; shorter does not shorten it; a huge one is capped.
    { failed: 1, random: 0.5, retryAfter: 60, want: 60_000 },
    { failed: 2, random: 0.5, retryAfter: 1, want: 300_000 },
    { failed: 1, random: 0.5, retryAfter: 10_000_000, want: 86_400_000 },
  ])(
    'after $failed failures (random $random, Retry-After $retryAfter): $want ms',
    ({ failed, random, retryAfter, want }) => {
      const got = retryDelayMs(failed, STANDARD_RETRY_SCHEDULE_S, random, retryAfter);
      if (want === undefined) expect(got).toBeUndefined();
      else expect(got).toBeCloseTo(want, -1);
    },
  );

  it('keeps every jittered delay within ±20 % of the schedule', () => {
    for (let failed = 1; failed <= STANDARD_RETRY_SCHEDULE_S.length; failed++) {
      const base = (STANDARD_RETRY_SCHEDULE_S[failed - 1] ?? 0) * 1000;
      for (const random of [0, 0.1, 0.37, 0.5, 0.81, 0.9999]) {
        const delay = retryDelayMs(failed, STANDARD_RETRY_SCHEDULE_S, random) ?? -1;
        expect(delay).toBeGreaterThanOrEqual(base * 0.8);
        expect(delay).toBeLessThanOrEqual(base * 1.2);
      }
    }
  });
});

describe('Retry-After', () => {
  const now = Date.parse('2026-11-26T12:00:00Z');
  it.each([
    { header: '120', want: 120 },
    { header: ' 7 ', want: 7 },
    { header: 'Thu, 26 Nov 2026 12:01:00 GMT', want: 60 },
    { header: 'Thu, 26 Nov 2026 11:00:00 GMT', want: 0 },
    { header: 'soon', want: undefined },
    { header: '-5', want: undefined },
    { header: '1.5', want: undefined },
    { header: undefined, want: undefined },
  ])('"$header" is $want s', ({ header, want }) => {
    expect(parseRetryAfter(header, now)).toBe(want);
  });
});

describe('safe targets', () => {
  it.each([
    ['127.0.0.1', false],
    ['10.0.0.1', false],
    ['172.32.0.1', true],
    ['169.254.169.254', false],
    ['100.64.0.1', false],
    ['8.8.8.8', true],
    ['::1', false],
    ['::', false],
    ['::ffff:10.1.2.3', false],
    ['::ffff:7f00:1', false],
    ['::ffff:8.8.8.8', true],
    ['::ffff:0:7f00:1', false],
    ['::7f00:1', false],
    ['::808:808', false],
    ['::ffff:0:808:808', false],
    ['2001:0:808:808:0:0:f7f7:f7f7', true],
    ['2001:0:808:808:0:0:80ff:fffe', false],
    ['64:ff9b::7f00:1', false],
    ['64:ff9b::808:808', true],
    ['64:ff9b:1::808:808', false],
    ['2002:7f00:1::', false],
    ['2002:808:808::', true],
    ['2001:0:4136:e378:8000:63bf:80ff:fffe', false],
    ['fec0::1', false],
    ['fe80::1', false],
    ['fd00:ec2::254', false],
    ['2001:db8::1', false],
    ['2606:4700:4700::1111', true],
    ['127.1', false],
    ['not an address', false],
  ])('%s: safe %s', (address, want) => {
    expect(isSafeAddress(address)).toBe(want);
  });

  it.each(UNSAFE_TARGETS)('refuses %s', (url) => {
    expect(urlProblem(url, false)).toBeDefined();
  });

  it('holds at least 34 unsafe spellings', () => {
    expect(UNSAFE_TARGETS.length).toBeGreaterThanOrEqual(34);
  });

  it.each(SAFE_TARGETS)('accepts %s', (url) => {
    expect(urlProblem(url, false)).toBeUndefined();
  });

  it.each([
    { url: 'https://hooks.example.com/x', allow: false, want: undefined },
    { url: 'http://hooks.example.com/x', allow: false, want: 'must be an https:// URL' },
    { url: 'http://hooks.example.com/x', allow: true, want: undefined },
    { url: 'https://127.0.0.1/x', allow: false, want: `must not point at 127.0.0.1: ${ADDRESS_RULE}` },
    { url: 'https://127.0.0.1/x', allow: true, want: undefined },
    { url: 'https://[::ffff:127.0.0.1]/x', allow: false, want: `must not point at ::ffff:7f00:1: ${ADDRESS_RULE}` },
    { url: 'https://localhost:8443/x', allow: false, want: 'must not be a loopback host' },
    { url: 'https://hooks.example.com:0/x', allow: true, want: 'must not name port 0' },
    { url: 'https://user:pw@hooks.example.com/', allow: false, want: 'must not carry a user name or password' },
    { url: 'ftp://hooks.example.com/', allow: true, want: 'must be an http:// or https:// URL' },
    { url: 'not a url', allow: false, want: 'must be an absolute URL' },
  ])('$url (private allowed: $allow): $want', ({ url, allow, want }) => {
    expect(urlProblem(url, allow)).toBe(want);
  });
});

describe('signatures', () => {
  const body = JSON.stringify({ id: 'evt_000000000000000000000001', type: 'space.created' });

  it('signs v1,<base64 HMAC-SHA256 of id.timestamp.body> as standardwebhooks verifies it', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([secret], 'evt_000000000000000000000001', timestamp, body);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carries one signature per secret during a rotation, each verifying on its own', () => {
    const [current, previous] = [newSecret(), newSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = webhookHeaders([current, previous], 'evt_000000000000000000000002', timestamp, body);
    expect(String(headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toBeTruthy();
    expect(new Webhook(previous).verify(body, headers)).toBeTruthy();
    expect(() => new Webhook(newSecret()).verify(body, headers)).toThrow();
  });

  it("is the specification's own test vector", () => {
    // From the Standard Webhooks specification's reference implementations' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signed = sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signed).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });
});

describe('id cursors', () => {
  const events = '/api/v1/events';
  const typed = { type: 'space.created' };
  it.each([1, 42, 9_007_199_254_740_991])('%i reads back', (id) => {
    const cursor = idCursor(id, events, typed);
    expect(idCursorProblem(cursor, events, typed)).toBeUndefined();
    expect(readIdCursor(cursor)).toBe(id);
  });
  it.each(['', undefined])('%s starts the list', (cursor) => {
    expect(idCursorProblem(cursor, events, {})).toBeUndefined();
    expect(readIdCursor(cursor)).toBeUndefined();
  });
  it('holds across page sizes: per_page may change between pages', () => {
    expect(idCursorProblem(idCursor(7, events, { per_page: '10' }), events, { per_page: '50' })).toBeUndefined();
  });
  it.each([
    ['base64url of a number, as cursors were before they were sealed', 'MTIzNA'],
    ['a number', '1234'],
    ['a cursor with a character more', `${idCursor(5, events, {})}A`],
    ['a zero id', idCursor(5, events, {}).replace('5', '0')],
  ])('%s is refused with a 422 naming after', (_name, cursor) => {
    expect(idCursorProblem(cursor, events, {})).toMatchObject({ kind: 'invalid-cursor' });
    expect(() => readIdCursor(cursor)).toThrow(/after/);
  });
  it.each([
    ['another filter', events, { type: 'domain.created' }],
    ['no filter', events, {}],
    ['another list', '/api/v1/webhook-endpoints/1/deliveries', typed],
  ])('made for %s is refused', (_name, path, sent) => {
    const problem = idCursorProblem(idCursor(5, events, typed), path, sent);
    expect(problem).toMatchObject({ kind: 'invalid-cursor' });
    expect(JSON.stringify(problem)).toMatch(/other filters/);
  });
});
