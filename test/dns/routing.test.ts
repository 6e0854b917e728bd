// Routing against a real Knot server: what a verify (and a scheduled check) sees of a domain's CNAME, A and AAAA
// records, beside and apart from its ownership record; the records each kind of name is told to publish; the
// `domain.routing_changed` event of a change of code; and lists filtered by routing. SQL writes and filters, so
// both engines.
import { describe, expect, it } from 'vitest';
import { runScheduledCheck } from '../../server/domains/scheduled-check.js';
import { NO_SUBSCRIBER } from '../../server/events/outbox.js';
import { ZONE } from '../support/knot.js';
import { dnsWorld, show, storeDomain, verified } from './support.js';

const TARGETS = { cname: 'edge.platform.example', a: ['192.0.2.10'], aaaa: ['2001:db8::10'] };
const world = await dnsWorld({ targets: TARGETS });
const { knot, server } = world;
const alice = await server.account('alice');

let names = 0;
const fresh = () => `route-${++names}.${ZONE}`;
const publish = (name: string, records: Array<[string, string]>) =>
  knot.update([
    `update delete ${name}.`,
    ...records.map(([type, value]) => `update add ${name}. 60 ${type} ${type === 'CNAME' ? `${value}.` : value}`),
  ]);

describe('domains_verify routing from real DNS answers', () => {
  it.each([
    ['a CNAME to the target', [['CNAME', 'edge.platform.example']], 'pointed', /CNAME reaches edge\.platform\.example/],
    [
      'a CNAME elsewhere',
      [['CNAME', 'elsewhere.example']],
      'not_pointed',
      /CNAME to elsewhere\.example.*Publish a CNAME record/,
    ],
    ['an address elsewhere', [['A', '203.0.113.5']], 'not_pointed', /203\.0\.113\.5/],
    [
      'an old address beside the target',
      [
        ['A', '192.0.2.10'],
        ['A', '203.0.113.5'],
      ],
      'partly_pointed',
      /203\.0\.113\.5/,
    ],
    ['no record', [], 'missing', /No CNAME, A or AAAA record/],
  ] as Array<[string, Array<[string, string]>, string, RegExp]>)(
    'observes %s',
    async (_case, records, code, message) => {
      const domain = await storeDomain(alice, fresh());
      expect(domain.kind).toBe('subdomain');
      expect(domain.dns_records.map(({ type, value, purpose }) => [type, value, purpose])).toEqual([
        ['TXT', domain.verification.value, 'ownership'],
        ['CNAME', 'edge.platform.example', 'routing'],
      ]);
      expect(domain.routing).toMatchObject({ code: 'not_checked', checked_at: null });
      if (records.length > 0) await publish(domain.name, records);
      const checked = await verified(alice, domain.id);
      expect(checked.routing.code).toBe(code);
      expect(checked.routing.message).toMatch(message);
      expect(checked.routing.checked_at).not.toBeNull();
      // Routing never decides the ownership state: no TXT record was published.
      expect(checked).toMatchObject({ status: 'pending', observation: { code: 'missing' } });
    },
  );

  it('checks an apex by its A and AAAA records, and reports what it resolved to', async () => {
    // The zone's own name is an apex under the Public Suffix List's default rule.
    const domain = await storeDomain(alice, ZONE);
    expect(domain.kind).toBe('apex');
    expect(domain.dns_records.filter((record) => record.purpose === 'routing')).toEqual([
      { type: 'A', name: ZONE, value: '192.0.2.10', purpose: 'routing' },
      { type: 'AAAA', name: ZONE, value: '2001:db8::10', purpose: 'routing' },
    ]);
    await knot.update([`update add ${ZONE}. 60 A 192.0.2.10`, `update add ${ZONE}. 60 AAAA 2001:db8::10`]);
    await knot.setTxt(domain.verification.name, [[domain.verification.value]]);
    const checked = await verified(alice, domain.id);
    expect(checked).toMatchObject({
      status: 'active',
      routing: { code: 'pointed', observed: { cname: [], a: ['192.0.2.10'], aaaa: ['2001:db8::10'] } },
    });
  });

  it('emits domain.routing_changed with the previous routing, from a verify and from a scheduled check', async () => {
    const domain = await storeDomain(alice, fresh());
    await publish(domain.name, [['CNAME', 'edge.platform.example']]);
    expect((await verified(alice, domain.id)).routing.code).toBe('pointed');
    // Verified again unchanged: no event.
    expect((await verified(alice, domain.id)).routing.code).toBe('pointed');
    await knot.remove(domain.name);
    await runScheduledCheck(server.db, world.checks, { id: domain.id, accountId: 0, name: domain.name }, NO_SUBSCRIBER);
    expect((await show(alice, domain.id)).routing.code).toBe('missing');

    const { data } = await alice.client.GET('/events', {
      params: { query: { type: 'domain.routing_changed', per_page: 100 } },
    });
    const changes = (data?.data ?? []).filter(
      (event) => event.type === 'domain.routing_changed' && event.data.object.id === domain.id,
    );
    const codes = changes.map((event) =>
      event.type === 'domain.routing_changed'
        ? [event.data.previous_attributes.routing.code, event.data.object.routing.code]
        : [],
    );
    expect(codes.sort()).toEqual([
      ['not_checked', 'pointed'],
      ['pointed', 'missing'],
    ]);
  });
});
