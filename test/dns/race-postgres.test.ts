// Two processes on one PostgreSQL database: the test's own app and the service started as `npm start` runs it,
// both looking records up in one real Knot server. Two accounts prove one name at once, each through another
// process: exactly one wins. And due checks claimed by two instances at once are each claimed once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/database.js';
import { claimDueChecks } from '../../server/domains/scheduled-check.js';
import { runScript, SERVICE } from '../service/process.js';
import { ZONE } from '../support/knot.js';
import { apiClient } from '../support/server.js';
import { dnsWorld, storeDomain } from './support.js';

const world = await dnsWorld({ schedule: { pendingFirstMs: 0 } });
const { knot, server } = world;
const alice = await server.account('alice');
const bob = await server.account('bob');

// The second process checks nothing by itself (DOMAIN_CHECKS=off), so the claims below are the test's alone.
const other = runScript(SERVICE, [], {
  PORT: '0',
  DATABASE_URL: server.databaseUrl,
  DNS_SERVERS: knot.address,
  DNS_TIMEOUT_S: '2',
  DNS_TRIES: '3',
  DOMAIN_CHECKS: 'off',
  LOG_LEVEL: 'warn',
  // A connection may take long to come on a machine busy with other work: this test is not about that.
  DATABASE_POOL_TIMEOUT_S: '30',
});
afterAll(() => other.stop());
// In a hook, not at the top: a start that fails must still let the afterAll hooks stop Knot and the process.
let bobElsewhere: ReturnType<typeof apiClient>;
beforeAll(async () => {
  const [, origin] = (await other.waitForOutput(/listening on (http:\/\/\S+)/)) as unknown as [string, string];
  bobElsewhere = apiClient(`${origin}/api/v1`, bob.key);
});

describe('two processes on one PostgreSQL database', () => {
  it('lets exactly one of two accounts proving a name at once win, each through another process', async () => {
    for (let round = 0; round < 5; round++) {
      const name = `race-${round}.${ZONE}`;
      const mine = await storeDomain(alice, name);
      const theirs = await storeDomain(bob, name);
      // Both publish: whoever commits first holds the name, and the other finds it held by a record still there.
      await knot.setTxt(mine.verification.name, [[mine.verification.value], [theirs.verification.value]]);
      const [a, b] = await Promise.all([
        alice.client.POST('/domains/{id}/verify', { params: { path: { id: mine.id } } }),
        bobElsewhere.POST('/domains/{id}/verify', { params: { path: { id: theirs.id } } }),
      ]);
      expect([a.response.status, b.response.status]).toEqual([200, 200]);
      const statuses = [a.data?.data.status, b.data?.data.status].sort();
      expect(statuses).toEqual(['active', 'pending']);
      const loser = a.data?.data.status === 'pending' ? a.data.data : b.data?.data;
      expect(loser?.observation.code).toBe('held_elsewhere');
      const rows = await server.db.selectFrom('domains').select('status').where('name', '=', name).execute();
      expect(rows.filter((row) => row.status === 'active')).toHaveLength(1);
    }
  });

  it('claims each due check once when two instances claim at once', async () => {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) ids.push((await storeDomain(alice, `due-${i}.${ZONE}`)).id);
    const second = openDatabase(server.databaseUrl);
    try {
      // Each claims up to more than are due (the first test's pending domains are due too): a claim picks its
      // candidates before it locks them, skipping those the other locked, so with a limit below the due count
      // both could pick the same first ones and leave the rest to a later round, which is no double claim.
      const [first, next] = await Promise.all([
        claimDueChecks(server.db, 100, 60_000),
        claimDueChecks(second, 100, 60_000),
      ]);
      const claimed = [...first, ...next].map((domain) => domain.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.filter((id) => ids.includes(id)).sort((x, y) => x - y)).toEqual(ids);
    } finally {
      await second.destroy();
    }
  });
});
