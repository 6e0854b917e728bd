// What a key may do, as tables: scope lists, the scopes an operation needs, durations and times for an expiry,
// address ranges and the client addresses they admit, and how stored text prints on a terminal.
import { describe, expect, it } from 'vitest';
import {
  addressAllowed,
  expired,
  type KeyPolicy,
  missingScopes,
  parseDuration,
  parseInstant,
  parseRange,
  parseScopes,
  policyOf,
  rangeList,
  SCOPES,
} from '../../server/accounts/key-policy.js';
import { type KeyListing, keyStatus } from '../../server/accounts/keys.js';
import { controlCharacterIn, MAX_NAME_LENGTH, nameProblem, printable } from '../../server/cli/terminal-text.js';
import { mayRead, readableTypes } from '../../server/events/read-scopes.js';
import { ApiSpec } from '../../server/spec-model.js';

describe('parseScopes', () => {
  it.each([
    ['spaces:read', ['spaces:read']],
    ['spaces:read,domains:read', ['domains:read', 'spaces:read']],
    [' domains:write  spaces:write ', ['domains:write', 'spaces:write']],
    ['events:read,events:read', ['events:read']],
    ['read', ['api_keys:read', 'domains:read', 'events:read', 'spaces:read', 'webhooks:read']],
    [
      'read,spaces:write',
      ['api_keys:read', 'domains:read', 'events:read', 'spaces:read', 'spaces:write', 'webhooks:read'],
    ],
  ])('reads %j', (text, scopes) => {
    expect(parseScopes(text)).toEqual(scopes);
  });

  it.each([
    ['', /at least one scope/],
    [',', /at least one scope/],
    ['spaces:delete', /Unknown scope "spaces:delete"/],
    ['Spaces:Read', /Unknown scope/],
    ['spaces', /Unknown scope "spaces"/],
    ['spaces:read,,', /empty entry between commas/],
    [',spaces:read', /empty entry between commas/],
    ['spaces:read, ,domains:read', /empty entry between commas/],
  ])('refuses %j', (text, problem) => {
    expect((parseScopes(text) as { error: string }).error).toMatch(problem);
  });

  it('knows every scope an operation of the spec declares', () => {
    for (const operation of ApiSpec.load().model.operations) {
      for (const scope of operation.scopes) expect(SCOPES, operation.id).toContain(scope);
    }
  });
});

describe('missingScopes', () => {
  const only = (...scopes: string[]): KeyPolicy => ({ scopes: new Set(scopes) });
  it.each([
    ['a key without scopes holds every scope', undefined, ['domains:write'], []],
    ['a key without scopes holds scopes added later', {}, ['billing:read'], []],
    ['the declared scope', only('domains:read'), ['domains:read'], []],
    ['write includes read', only('domains:write'), ['domains:read'], []],
    ["write includes no other resource's read", only('domains:write'), ['spaces:read'], ['spaces:read']],
    ['read does not include write', only('domains:read'), ['domains:write'], ['domains:write']],
    ['another resource', only('spaces:write'), ['domains:write'], ['domains:write']],
    ['no scopes at all', only(), ['spaces:read'], ['spaces:read']],
    ['all of a requirement', only('a:read'), ['a:read', 'b:read'], ['b:read']],
  ])('%s', (_name, policy, declared, missing) => {
    expect(missingScopes(policy as KeyPolicy | undefined, declared)).toEqual(missing);
  });
});

describe('parseDuration and parseInstant', () => {
  it.each([
    ['90d', 90 * 86_400_000],
    ['24h', 86_400_000],
    ['30m', 1_800_000],
    ['45s', 45_000],
    ['2w', 14 * 86_400_000],
    ['0s', 0],
  ])('%s', (text, ms) => {
    expect(parseDuration(text, '--expires-in')).toBe(ms);
  });

  it.each(['90', 'd', '1.5d', '-1d', '90 days', '3661d', '1y', ''])('refuses the duration %j', (text) => {
    expect((parseDuration(text, '--expires-in') as { error: string }).error).toMatch(/--expires-in must be/);
  });

  it.each([
    ['2027-01-31T00:00:00Z', Date.UTC(2027, 0, 31)],
    ['2027-01-31T01:00:00+01:00', Date.UTC(2027, 0, 31)],
    ['2027-01-31T00:00:00.500Z', Date.UTC(2027, 0, 31) + 500],
  ])('reads the time %s', (text, ms) => {
    expect(parseInstant(text, '--expires-at')).toBe(ms);
  });

  it.each(['2027-01-31', '2027-01-31T00:00:00', 'tomorrow', '2027-1-31T00:00:00Z'])('refuses the time %j', (text) => {
    expect((parseInstant(text, '--expires-at') as { error: string }).error).toMatch(/with its zone/);
  });

  const now = Date.UTC(2026, 10, 27);
  it.each([
    ['2027-02-30T00:00:00Z', /does not exist/],
    ['2027-02-29T00:00:00Z', /does not exist/],
    ['2027-04-31T00:00:00Z', /does not exist/],
    ['2027-13-01T00:00:00Z', /does not exist/],
    ['2027-00-10T00:00:00Z', /does not exist/],
    ['2027-01-00T00:00:00Z', /does not exist/],
    ['2027-01-31T24:00:00Z', /does not exist/],
    ['2027-01-31T23:60:00Z', /does not exist/],
    ['2027-01-31T23:59:60Z', /does not exist/],
    ['2027-01-31T00:00:00+24:00', /does not exist/],
    ['2027-01-31T00:00:00+01:60', /does not exist/],
    ['9999-12-31T00:00:00Z', /at most 10 years from now/],
    ['2036-12-31T00:00:00Z', /at most 10 years from now/],
    ['0000-01-01T00:00:00Z', /from 1970 on/],
    ['1969-12-31T23:59:59Z', /from 1970 on/],
  ])('refuses the impossible or far time %s', (text, problem) => {
    expect((parseInstant(text, '--expires-at', now) as { error: string }).error).toMatch(problem);
  });

  it.each([
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['2036-11-26T00:00:00Z', Date.UTC(2036, 10, 26)],
    ['2001-01-01T00:00:00Z', Date.UTC(2001, 0, 1)],
  ])('reads the time %s within the bounds', (text, ms) => {
    expect(parseInstant(text, '--expires-at', now)).toBe(ms);
  });

  it.each([
    [undefined, false],
    [{}, false],
    [{ expiresAt: 1_000 }, true],
    [{ expiresAt: 1_001 }, false],
  ])('expired(%j) at 1000: %s', (policy, want) => {
    expect(expired(policy, 1_000)).toBe(want);
  });
});

describe('address ranges', () => {
  it.each([
    ['10.0.0.0/8', '10.0.0.0/8'],
    ['192.0.2.7', '192.0.2.7/32'],
    ['2001:DB8::/32', '2001:db8::/32'],
    ['::1', '::1/128'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['::ffff:10.0.0.0/104', '10.0.0.0/8'],
    ['::ffff:7f00:1', '127.0.0.1/32'],
    ['::FFFF:192.0.2.7/128', '192.0.2.7/32'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1/128'],
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1/128'],
    // Two runs of zeros tie: RFC 5952 4.2.3 compresses the first (ipaddr.js 1.9.1's toRFC5952String, the last).
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4/128'],
    ['2001:db8:0:1:0:0:2:0/128', '2001:db8:0:1::2:0/128'],
    ['2001:db8:1:0:1:0:1:0/128', '2001:db8:1:0:1:0:1:0/128'],
    ['2001:db8:0:0:1::/80', '2001:db8:0:0:1::/80'],
    ['2001:db8:0:0:0:0:1:0/112', '2001:db8::1:0/112'],
    ['::/0', '::/0'],
  ])('reads %s', (text, range) => {
    expect(parseRange(text)).toBe(range);
  });

  it.each([
    ['::ffff:10.0.0.0/8', /IPv4-mapped address with a prefix shorter than 96: it means ::\/8/],
    ['::ffff:192.168.0.0/16', /it means ::\/16/],
    ['::ffff:0.0.0.0/95', /shorter than 96/],
    ['10.0.0.1/8', /bits set past its \/8 prefix: write 10.0.0.0\/8/],
    ['2001:db8::1/32', /write 2001:db8::\/32/],
    ['::10.0.0.1', /IPv4 address inside IPv6 other than ::ffff/],
    ['::ffff:0:10.0.0.1', /IPv4 address inside IPv6/],
    ['64:ff9b::10.0.0.1', /IPv4 address inside IPv6/],
    ['fe80::1%eth0', /not an IPv4 or IPv6 address/],
    ['010.0.0.1', /not an IPv4 or IPv6 address/],
  ])('refuses %j, whose meaning changes when written another way', (text, problem) => {
    expect((parseRange(text) as { error: string }).error).toMatch(problem);
  });

  it.each(['10.0.0.0/33', '10.0.0/8', '2001:db8::/129', 'example.com', '10.0.0.0/8/8', '10.0.0.0/x', ''])(
    'refuses %j',
    (text) => {
      expect((parseRange(text) as { error: string }).error).toMatch(/not an IPv4 or IPv6 address or range/);
    },
  );

  const policy: KeyPolicy = { allowedIps: rangeList('10.0.0.0/8,192.0.2.7/32,2001:db8::/32') };
  it.each([
    ['10.1.2.3', true],
    ['11.0.0.1', false],
    ['192.0.2.7', true],
    ['192.0.2.8', false],
    ['::ffff:10.9.9.9', true],
    ['::ffff:11.9.9.9', false],
    ['2001:db8:1::5', true],
    ['2001:db9::5', false],
    ['', false],
    ['not an address', false],
  ])('%s is allowed: %s', (address, want) => {
    expect(addressAllowed(policy, address)).toBe(want);
  });

  it('lets a key without ranges in from anywhere', () => {
    expect(addressAllowed({}, '203.0.113.9')).toBe(true);
    expect(addressAllowed(undefined, undefined)).toBe(true);
  });
});

describe('policyOf a row', () => {
  it('reads null columns as no limit', () => {
    expect(policyOf({ scopes: null, expires_at: null, allowed_ips: null, replaced_by: null })).toEqual({});
  });

  it('reads an empty scope list as no scope, not every scope', () => {
    expect(policyOf({ scopes: '', expires_at: null, allowed_ips: null, replaced_by: null }).scopes?.size).toBe(0);
  });

  it('reads scopes, expiry and successor', () => {
    const policy = policyOf({
      scopes: 'domains:read spaces:read',
      expires_at: '2027-01-31T00:00:00.000Z',
      allowed_ips: '10.0.0.0/8',
      replaced_by: 'abcdefabcdef',
    });
    expect([...(policy.scopes ?? [])]).toEqual(['domains:read', 'spaces:read']);
    expect(policy.expiresAt).toBe(Date.UTC(2027, 0, 31));
    expect(policy.replacedBy).toBe('abcdefabcdef');
    expect(addressAllowed(policy, '10.0.0.1')).toBe(true);
  });
});

describe('keyStatus', () => {
  const key = (extra: Partial<KeyListing>): KeyListing => ({
    publicId: 'abcdefabcdef',
    account: 'acme',
    label: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    revokedAt: null,
    lastUsedAt: null,
    scopes: null,
    expiresAt: null,
    allowedIps: null,
    replacedBy: null,
    replacedAt: null,
    ...extra,
  });
  const now = Date.UTC(2026, 5, 1);
  it.each([
    ['active', {}],
    ['revoked', { revokedAt: '2026-02-01T00:00:00.000Z' }],
    ['expired', { expiresAt: '2026-05-01T00:00:00.000Z' }],
    ['active', { expiresAt: '2026-07-01T00:00:00.000Z' }],
    ['rotating', { replacedBy: 'b', expiresAt: '2026-06-02T00:00:00.000Z' }],
    ['rotated', { replacedBy: 'b', expiresAt: '2026-05-31T00:00:00.000Z' }],
  ])('%s: %j', (status, extra) => {
    expect(keyStatus(key(extra), now)).toBe(status);
  });
});

describe('text printed on a terminal', () => {
  it.each([
    ['acme', undefined],
    ['Zoë & Co', undefined],
    ['evil\u001b[2J', '\\x1b'],
    ['two\nlines', '\\x0a'],
    ['tab\there', '\\x09'],
    ['del\u007f', '\\x7f'],
    ['c1\u009b', '\\x9b'],
    ['bidi\u202eevil', '\\u202e'],
  ])('%j has the control character %s', (text, control) => {
    expect(controlCharacterIn(text)).toBe(control);
  });

  it.each([
    ['acme', undefined],
    ['Zoë & Co', undefined],
    ['東京 支社', undefined],
    ['a'.repeat(MAX_NAME_LENGTH), undefined],
    ['a'.repeat(MAX_NAME_LENGTH + 1), /at most 100 characters \(it has 101\)/],
    ['acme\u2028', /line-separator characters \(it has \\u2028\)/],
    ['acme\u2029', /\\u2029/],
    ['ac\u200bme', /invisible.*\\u200b/],
    ['ac\u200cme', /\\u200c/],
    ['ac\u200dme', /\\u200d/],
    ['ac\u2060me', /\\u2060/],
    ['\ufeffacme', /\\ufeff/],
    ['ac\u00adme', /\\xad/],
    ['acme\u{e0041}', /\\u\{e0041\}/],
    ['ac\u00a0me', /space-like.*\\xa0/],
    ['ac\u3000me', /\\u3000/],
    ['ac\u3164me', /\\u3164/],
    ['bidi\u2067x', /control characters \(it has \\u2067\)/],
    ['bidi\u200ex', /control characters/],
    ['new\nline', /control characters/],
    ['Zoe\u0308', /composed form/],
    ['lone\ud800', /\\ud800/],
  ])('name %j: %s', (text, problem) => {
    const found = nameProblem(text);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(problem);
  });

  it.each([
    ['acme', 'acme'],
    ['ac\u200bme\u2028', 'ac\\u200bme\\u2028'],
    ['a\u001b[31mred', 'a\\x1b[31mred'],
    ['row\nforged  active', 'row\\x0aforged  active'],
    ['back\\slash', 'back\\\\slash'],
    ['\u202eabc', '\\u202eabc'],
  ])('prints %j as %j', (text, shown) => {
    expect(printable(text)).toBe(shown);
    expect(controlCharacterIn(printable(text))).toBeUndefined();
  });
});

describe('the read rule (events/read-scopes.ts)', () => {
  const TYPES = readableTypes({ scopes: new Set(['domains:read', 'spaces:read', 'webhooks:read']) }) ?? [];
  const policies: Array<KeyPolicy | undefined> = [
    undefined,
    { scopes: new Set() },
    { scopes: new Set(['events:read']) },
    { scopes: new Set(['spaces:read']) },
    { scopes: new Set(['domains:write', 'webhooks:read']) },
    { scopes: new Set(['domains:read', 'spaces:write', 'webhooks:write']) },
  ];

  it.each([
    [undefined, 'domain.created', true],
    [{ scopes: new Set(['spaces:read']) }, 'domain.created', false],
    [{ scopes: new Set(['spaces:read']) }, 'space.updated', true],
    [{ scopes: new Set(['domains:write']) }, 'domain.active', true],
    [{ scopes: new Set(['events:read']) }, 'webhook.test', false],
    [{ scopes: new Set(['webhooks:write']) }, 'webhook.test', true],
  ] as Array<[KeyPolicy | undefined, string, boolean]>)('%o reads %s: %s', (policy, type, allowed) => {
    expect(mayRead(policy, type)).toBe(allowed);
  });

  it('gives the list filter the same answer as mayRead, for every policy and type', () => {
    expect(TYPES).toEqual(expect.arrayContaining(['domain.created', 'space.deleted', 'webhook.test']));
    for (const policy of policies) {
      const types = readableTypes(policy);
      for (const type of TYPES) {
        const listed = types === undefined || types.includes(type);
        expect([policy, type, listed]).toEqual([policy, type, mayRead(policy, type)]);
      }
    }
  });
});
