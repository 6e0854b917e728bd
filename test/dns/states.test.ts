// The domain lifecycle against a real DNS server (Knot), through the API, as two accounts play it: pending
// claims that block nobody, a proof that wins, a store refused once the name is active elsewhere, a failed
// lookup that demotes nothing, a record removed and the state following it, and the name moving to a prover.
// On both engines: the transitions are SQL.
import { describe, expect, it } from 'vitest';
import { createClient, type DomainStatus, etagOf } from '../../client/src/index.js';
import { domainCheckJob } from '../../server/domains/scheduler.js';
import { NO_SUBSCRIBER } from '../../server/events/outbox.js';
import { ZONE } from '../support/knot.js';
import { dnsWorld, show, storeDomain, verified, verify } from './support.js';

const world = await dnsWorld({ schedule: { pendingFirstMs: 0 } });
const { knot, server } = world;
const alice = await server.account('alice');
const bob = await server.account('bob');
const carol = await server.account('carol');

describe('domain states through real DNS', () => {
  it('plays two accounts for one name from pending to claimed elsewhere', async () => {
    const name = `shop.${ZONE}`;
    const record = `_dss-challenge.${name}`;
    const mine = await storeDomain(alice, name);
    const theirs = await storeDomain(bob, name);
    expect([mine.status, theirs.status]).toEqual(['pending', 'pending']);
    expect(mine.verification).toEqual({ type: 'txt', name: record, value: expect.stringMatching(/^dss-verify=/) });
    expect(mine.verification.value).not.toBe(theirs.verification.value);

    // Nothing published: still pending, and the observation says what to do.
    const missing = await verified(alice, mine.id);
    expect(missing).toMatchObject({ status: 'pending', observation: { code: 'missing', values: [] } });
    expect(missing.observation.message).toContain(mine.verification.value);
    expect(missing.last_checked_at).not.toBeNull();

    await knot.setTxt(record, [[mine.verification.value]]);
    const active = await verified(alice, mine.id);
    expect(active).toMatchObject({ status: 'active', observation: { code: 'found' } });
    expect(active.verified_at).toBe(active.last_checked_at);
    expect(Date.parse(active.next_check_at ?? '')).toBeGreaterThan(Date.parse(active.verified_at ?? ''));

    // Held: a new store elsewhere is refused; the pending claim that exists cannot prove without its record.
    const refused = await carol.client.POST('/domains', { body: { name } });
    expect(refused.response.status).toBe(409);
    expect(refused.error).toMatchObject({ type: '/problems/domain-held-elsewhere' });
    expect(await verified(bob, theirs.id)).toMatchObject({ status: 'pending', observation: { code: 'wrong_value' } });

    // A lookup that fails changes nothing but the observation.
    world.silence(true);
    try {
      const failed = await verified(alice, mine.id);
      expect(failed).toMatchObject({ status: 'active', observation: { code: 'lookup_failed' } });
      expect(failed.observation.message).toContain('timeout');
      expect(failed.verified_at).toBe(active.verified_at);
    } finally {
      world.silence(false);
    }

    // The record removed: misconfigured, still holding the name.
    await knot.remove(record);
    expect(await verified(alice, mine.id)).toMatchObject({ status: 'misconfigured', observation: { code: 'missing' } });
    const listed = await alice.client.GET('/domains', { params: { query: { status: 'misconfigured' } } });
    expect(listed.data?.data.map((domain) => domain.id)).toEqual([mine.id]);
    expect((await carol.client.POST('/domains', { body: { name } })).response.status).toBe(409);

    // Bob publishes his record and proves the name: it moves to him.
    await knot.setTxt(record, [[theirs.verification.value]]);
    const won = await verified(bob, theirs.id);
    expect(won).toMatchObject({ status: 'active', observation: { code: 'found' }, claimed_elsewhere_at: null });
    const lost = await show(alice, mine.id);
    expect(lost.status).toBe('claimed_elsewhere');
    expect(lost.claimed_elsewhere_at).toBe(won.last_checked_at);
    expect(lost.next_check_at).toBeNull();

    // Alice's record back next to Bob's: the holder still proves the name, so it stays with him.
    await knot.setTxt(record, [[theirs.verification.value], [mine.verification.value]]);
    expect(await verified(alice, mine.id)).toMatchObject({
      status: 'claimed_elsewhere',
      observation: { code: 'held_elsewhere' },
    });
    expect((await show(bob, theirs.id)).status).toBe('active');
  });

  it("answers 404 for a verify of another account's domain and changes nothing", async () => {
    const domain = await storeDomain(alice, `private.${ZONE}`);
    const { response, error } = await verify(bob, domain.id);
    expect(response.status).toBe(404);
    expect(error).toMatchObject({ type: '/problems/not-found' });
    expect((await show(alice, domain.id)).last_checked_at).toBeNull();
  });

  it('is driven by the client library: domains.verify, the status filter, etagOf', async () => {
    const api = createClient({ baseUrl: server.apiUrl, apiKey: carol.key, maxRetries: 0 });
    const domain = await api.domains.create({ name: `client.${ZONE}` });
    await knot.setTxt(domain.verification.name, [[domain.verification.value]]);
    const active: DomainStatus = 'active';
    const checked = await api.domains.verify(domain.id);
    expect(checked).toMatchObject({ id: domain.id, status: active, observation: { code: 'found' } });
    expect(etagOf(checked)).toMatch(/^"\d+\.\d+"$/);
    const page = await api.domains.list({ status: 'active' });
    expect(page.data.map((each) => each.id)).toContain(domain.id);
  });

  it('checks due domains without anyone asking, each once', async () => {
    const name = `scheduled.${ZONE}`;
    const domain = await storeDomain(carol, name);
    await knot.setTxt(`_dss-challenge.${name}`, [[domain.verification.value]]);
    const job = domainCheckJob(server.db, world.checks, { queriesPerSecond: 1000 }, NO_SUBSCRIBER);
    // The store made it due at once (pendingFirstMs 0): one claim takes it, and a second finds nothing due.
    const claimed = await job.claim(1000, 'test');
    await Promise.all(claimed.map((domain) => job.run(domain, 'test')));
    expect(await job.claim(1000, 'test')).toEqual([]);
    const checked = await show(carol, domain.id);
    expect(checked).toMatchObject({ status: 'active', observation: { code: 'found' } });
    const row = await server.db.selectFrom('domains').select('version').where('id', '=', domain.id).executeTakeFirst();
    // Stored at version 1, one check: version 2. A second check of the same due row would have made it 3.
    expect(Number(row?.version)).toBe(2);
  });
});
