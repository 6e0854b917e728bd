// What a verify observes for each kind of DNS answer from a real Knot server (and from a server that never
// answers), the verify's own refusal when asked too often (429 with an honest Retry-After), a test-zone name
// outside the sandbox (never looked up: missing), and the sandbox's test zone verified at once. The engine
// behind does not matter.
import { describe, expect, it } from 'vitest';
import { txtLookup } from '../../server/domains/txt-lookup.js';
import { BROKEN_ZONE, silentServer, ZONE } from '../support/knot.js';
import { dnsWorld, storeDomain, verified, verify } from './support.js';

const world = await dnsWorld({ verifyLimit: 3 });
const { knot, server } = world;
const alice = await server.account('alice');

let names = 0;
const fresh = (zone = ZONE) => `answer-${++names}.${zone}`;

describe('domains_verify observations from real DNS answers', () => {
  const ours = (value: string) => value;
  const cases: Array<[string, (value: string) => string[][], string, RegExp]> = [
    ['our value', (value) => [[ours(value)]], 'found', /Found/],
    ['our value split into several strings', (value) => [[value.slice(0, 7), value.slice(7)]], 'found', /Found/],
    ['our value among several records', (value) => [['v=spf1 -all'], [value], ['other']], 'found', /Found/],
    ['another value', () => [['dss-verify=not-this-one']], 'wrong_value', /another value/],
    ['several records without ours', () => [['one'], ['two']], 'several_values', /2 TXT records/],
    ['a 10 KB record', () => [Array.from({ length: 40 }, () => 'x'.repeat(250))], 'wrong_value', /another value/],
    ['200 records', () => Array.from({ length: 200 }, (_, i) => [`record-${i}`]), 'several_values', /200 TXT/],
  ];
  it.each(cases)('observes %s', async (_case, records, code, message) => {
    const domain = await storeDomain(alice, fresh());
    await knot.setTxt(domain.verification.name, records(domain.verification.value));
    const checked = await verified(alice, domain.id);
    expect(checked.observation.code).toBe(code);
    expect(checked.observation.message).toMatch(message);
    expect(checked.status).toBe(code === 'found' ? 'active' : 'pending');
    expect(checked.observation.values.length).toBeLessThanOrEqual(5);
    expect(checked.observation.values.every((value) => value.length <= 101)).toBe(true);
  });

  it.each([
    ['a name that does not exist (NXDOMAIN)', () => fresh(), 'missing', /NXDOMAIN/],
    ['SERVFAIL', () => fresh(BROKEN_ZONE), 'lookup_failed', /SERVFAIL/],
    ['REFUSED', () => fresh('elsewhere.example'), 'lookup_failed', /REFUSED/],
  ])('observes %s', async (_case, name, code, message) => {
    const domain = await storeDomain(alice, name());
    const checked = await verified(alice, domain.id);
    expect(checked).toMatchObject({ status: 'pending', observation: { code, values: [] } });
    expect(checked.observation.message).toMatch(message);
  });

  it('observes a server that does not answer as a failed lookup, within the resolver timeout', async () => {
    const domain = await storeDomain(alice, fresh());
    world.silence(true);
    try {
      const checked = await verified(alice, domain.id);
      expect(checked).toMatchObject({ status: 'pending', observation: { code: 'lookup_failed' } });
      expect(checked.observation.message).toMatch(/timeout/);
    } finally {
      world.silence(false);
    }
  });
});

describe('DNS_TIMEOUT_S', () => {
  it('bounds a whole lookup, every try included, against a server that never answers', async () => {
    const silent = await silentServer();
    // Four tries whose timeouts c-ares doubles would take 0.3 + 0.6 + 1.2 + 2.4 s: the limit is the lookup's.
    const lookup = txtLookup({ servers: [silent.address], timeoutMs: 300, tries: 4 });
    try {
      const started = performance.now();
      const result = await lookup(`_dss-challenge.${fresh()}`);
      const elapsed = performance.now() - started;
      expect(result).toEqual({ error: 'ETIMEOUT' });
      expect(elapsed).toBeGreaterThanOrEqual(290);
      expect(elapsed).toBeLessThan(2500);
    } finally {
      lookup.close();
      await silent.close();
    }
  });
});

describe('domains_verify refusals', () => {
  it('answers 429 with Retry-After past the per-domain limit, and checks nothing more', async () => {
    const domain = await storeDomain(alice, fresh());
    for (let i = 0; i < 3; i++) expect((await verify(alice, domain.id)).response.status).toBe(200);
    const before = await server.db
      .selectFrom('domains')
      .select('version')
      .where('id', '=', domain.id)
      .executeTakeFirst();
    const { response, error } = await verify(alice, domain.id);
    expect(response.status).toBe(429);
    expect(error).toMatchObject({ type: '/problems/verify-rate-limited', status: 429 });
    const retryAfter = Number(response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(error?.detail).toContain(`retry in ${retryAfter} seconds`);
    const after = await server.db
      .selectFrom('domains')
      .select('version')
      .where('id', '=', domain.id)
      .executeTakeFirst();
    expect(after?.version).toBe(before?.version);
  });

  it('observes missing for a name of the sandbox test zone outside the sandbox, as a scheduled check does', async () => {
    const domain = await storeDomain(alice, 'shop.alice.dss-test.example');
    const checked = await verified(alice, domain.id);
    expect(checked).toMatchObject({ status: 'pending', observation: { code: 'missing', values: [] } });
    expect(checked.observation.message).toContain('verify only in the sandbox');
  });

  it('refuses an IP address as a name with a 422 naming the field', async () => {
    const { response, error } = await alice.client.POST('/domains', { body: { name: '192.0.2.1' } });
    expect(response.status).toBe(422);
    expect(error?.errors?.[0]).toMatchObject({ field: 'name', message: expect.stringContaining('IP address') });
  });
});
