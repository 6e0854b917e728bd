// The routing rules as tables: apex or subdomain by the Public Suffix List, the records each kind publishes,
// and what a lookup's answers say about where the name's traffic goes.
import { describe, expect, it } from 'vitest';
import { observeRouting, type RoutingLookupResult } from '../../server/domains/routing-rules.js';
import { dnsRecords, domainKind, NO_TARGETS, type RoutingTargets } from '../../server/domains/routing-targets.js';
import { commaListValues } from '../../server/formats.js';
import { commaListMessage } from '../../server/http/conventions/list-filters.js';

const BOTH: RoutingTargets = { cname: 'edge.platform.example', a: ['192.0.2.10'], aaaa: ['2001:db8::10'] };
const CNAME_ONLY: RoutingTargets = { cname: 'edge.platform.example', a: [], aaaa: [] };
const ADDRESSES: RoutingTargets = { cname: undefined, a: ['192.0.2.10', '192.0.2.11'], aaaa: ['2001:db8::10'] };

describe('domainKind', () => {
  it.each([
    ['example.com', 'apex'],
    ['shop.example.com', 'subdomain'],
    ['example.co.uk', 'apex'],
    ['shop.example.co.uk', 'subdomain'],
    ['xn--bcher-kva.example', 'apex'],
    ['a.b.verify.example', 'subdomain'],
  ])('%s is an %s', (name, kind) => {
    expect(domainKind(name)).toBe(kind);
  });
});

describe('dnsRecords', () => {
  const txt = { type: 'TXT', name: '_dss-challenge.shop.example.com', value: 'dss-verify=t', purpose: 'ownership' };
  it.each([
    ['a subdomain with a CNAME target', 'subdomain', BOTH, [['CNAME', 'edge.platform.example']]],
    [
      'a subdomain with addresses only',
      'subdomain',
      ADDRESSES,
      [
        ['A', '192.0.2.10'],
        ['A', '192.0.2.11'],
        ['AAAA', '2001:db8::10'],
      ],
    ],
    [
      'an apex',
      'apex',
      BOTH,
      [
        ['A', '192.0.2.10'],
        ['AAAA', '2001:db8::10'],
      ],
    ],
    ['an apex with a CNAME target only', 'apex', CNAME_ONLY, []],
    ['no target', 'subdomain', NO_TARGETS, []],
  ] as const)('%s: the ownership TXT record, then its routing records', (_case, kind, targets, routing) => {
    const records = dnsRecords('shop.example.com', 't', kind, targets);
    expect(records[0]).toEqual(txt);
    expect(records.slice(1)).toEqual(
      routing.map(([type, value]) => ({ type, name: 'shop.example.com', value, purpose: 'routing' })),
    );
  });
});

describe('observeRouting', () => {
  const values = (...v: string[]) => ({ values: v });
  const none = { error: 'ENODATA' };
  const answers = (
    cname: RoutingLookupResult['cname'],
    a: RoutingLookupResult['a'],
    aaaa: RoutingLookupResult['aaaa'] = none,
  ) => ({
    cname,
    a,
    aaaa,
  });
  it.each([
    [
      'a CNAME reaching the target',
      'subdomain',
      BOTH,
      answers(values('edge.platform.example'), values('192.0.2.99')),
      'pointed',
    ],
    [
      'a CNAME chain reaching the target',
      'subdomain',
      CNAME_ONLY,
      answers(values('a.cdn.example', 'edge.platform.example'), none),
      'pointed',
    ],
    [
      'a CNAME elsewhere',
      'subdomain',
      CNAME_ONLY,
      answers(values('other.example'), values('198.51.100.1')),
      'not_pointed',
    ],
    [
      'addresses all the targets',
      'apex',
      ADDRESSES,
      answers(none, values('192.0.2.10'), values('2001:DB8:0::10')),
      'pointed',
    ],
    [
      'an old address beside the new one',
      'apex',
      ADDRESSES,
      answers(none, values('192.0.2.10', '203.0.113.5')),
      'partly_pointed',
    ],
    ['other addresses only', 'apex', ADDRESSES, answers(none, values('203.0.113.5')), 'not_pointed'],
    [
      'nothing (NXDOMAIN)',
      'subdomain',
      BOTH,
      answers({ error: 'ENOTFOUND' }, { error: 'ENOTFOUND' }, { error: 'ENOTFOUND' }),
      'missing',
    ],
    ['a failed lookup', 'subdomain', BOTH, answers({ error: 'ETIMEOUT' }, none), 'lookup_failed'],
    ['no target', 'subdomain', NO_TARGETS, answers(values('edge.platform.example'), none), 'no_target'],
    ['an apex when only a CNAME target is set', 'apex', CNAME_ONLY, answers(none, values('192.0.2.10')), 'no_target'],
  ] as const)('%s: %s', (_case, kind, targets, result, code) => {
    const observation = observeRouting('shop.example.com', kind, targets, result);
    expect(observation.code).toBe(code);
    expect(observation.message).toContain(code === 'no_target' ? 'Not checked' : 'shop.example.com');
  });

  it('says what it found and what to publish instead', () => {
    const observation = observeRouting(
      'shop.example.com',
      'subdomain',
      CNAME_ONLY,
      answers(none, values('198.51.100.1')),
    );
    expect(observation).toMatchObject({ code: 'not_pointed', observed: { cname: [], a: ['198.51.100.1'], aaaa: [] } });
    expect(observation.message).toMatch(
      /198\.51\.100\.1.*CNAME record at shop\.example\.com to edge\.platform\.example/,
    );
  });
});

describe('comma-separated list patterns (status, routing)', () => {
  it.each([
    ['^(a|b_c)(,(a|b_c))*$', ['a', 'b_c']],
    ['^(a|b)(,(a|c))*$', undefined],
    ['^[a-z]+$', undefined],
  ])('%s lists %j', (pattern, values) => {
    expect(commaListValues(pattern)).toEqual(values);
  });

  it('names the values sent that are not allowed', () => {
    expect(commaListMessage(['a', 'b'], 'a,x,y,x')).toBe(
      'must be one or more of a, b, separated by commas ("x", "y" are not one)',
    );
    expect(commaListMessage(['a', 'b'], '')).toBe('must be one or more of a, b, separated by commas ("" is not one)');
  });
});
