// Several processes of the service (server/main.ts, as `npm start` runs it) on one database and one Redis
// share one rate-limit budget; a REDIS_URL that does not answer stops the start-up with a message.
import { afterAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { policyItem } from '../support/rate-limit.js';
import { REDIS_URL, skipRedis, uniquePrefix, warnIfSkipped } from '../support/redis.js';
import { type Running, runScript, runToExit, SERVICE, stopAll } from './process.js';

const SLOW = { timeout: 90_000 };

// Every child is stopped at the end, passed or failed (SIGTERM, then SIGKILL by PID): the first test's first process
// serves the second test too (a start costs seconds of CPU).
const databases: TestDatabase[] = [];
afterAll(async () => {
  await stopAll();
  await Promise.all(databases.map((d) => d.drop()));
});

warnIfSkipped('rate-limit-redis.test.ts');

async function start(env: Record<string, string>): Promise<{ server: Running; url: string; banner: string }> {
  const server = runScript(SERVICE, [], { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env });
  const [banner] = await server.waitForOutput(/listening on [\s\S]*curl [^\n]*\n/, 60_000);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
  if (!url) throw new Error(`no URL in:\n${banner}`);
  return { server, url, banner };
}

describe.skipIf(skipRedis)('two processes with one REDIS_URL', SLOW, () => {
  /** The first test's first process, its environment and its key, whose budget that test spent. */
  let spent: { server: Running; url: string; env: Record<string, string>; key: string } | undefined;

  it('share one budget per key: 10 requests to each, then the 21st to either is 429 with Retry-After', async () => {
    const database = await freshDatabase();
    databases.push(database);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      REDIS_PREFIX: uniquePrefix(),
      RATE_LIMIT: '20/60',
      AUTH_FAILURE_LIMIT: '4/60',
    };
    // One after the other: the first creates the schema and prints the demo key.
    const first = await start(env);
    const second = await start(env);
    const key = first.server.firstKey() as string;
    expect(second.server.firstKey()).toBeUndefined();
    const get = (url: string, authorization = `Bearer ${key}`) =>
      fetch(`${url}/api/v1/spaces`, { headers: { Authorization: authorization } });

    for (let round = 0; round < 10; round++) {
      for (const [index, { url }] of [first, second].entries()) {
        const answer = await get(url);
        expect(answer.status).toBe(200);
        expect(policyItem(answer.headers.get('ratelimit-policy'))).toMatchObject({ name: 'api-key', q: 20, w: 60 });
        expect(policyItem(answer.headers.get('ratelimit'))).toMatchObject({ r: 20 - (2 * round + index + 1) });
      }
    }
    for (const { url } of [first, second]) {
      const refused = await get(url);
      expect(refused.status).toBe(429);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect((await refused.json()).status).toBe(429);
    }

    // The failed-authentication guard is shared too: two wrong keys at each, then the address is refused at both.
    const wrong = `Bearer dss_000000000000_${'A'.repeat(43)}`;
    for (const { url } of [first, second, first, second]) expect((await get(url, wrong)).status).toBe(401);
    for (const { url } of [first, second]) expect((await get(url, wrong)).status).toBe(429);

    // Both stop cleanly, closing their Redis connections (the first after the next test, which asks it again).
    expect((await second.server.stop()).code).toBe(0);
    spent = { ...first, env, key };
  });

  it('keeps the budgets of two deployments apart with their own REDIS_PREFIX', async () => {
    // The test above spent the key's budget in its deployment (its prefix); another deployment on the same
    // database and Redis, with a prefix of its own, counts the same key from its whole budget.
    if (!spent) throw new Error('needs the process of the test above');
    const other = await start({ ...spent.env, REDIS_PREFIX: uniquePrefix() });
    const get = (url: string) => fetch(`${url}/api/v1/domains`, { headers: { Authorization: `Bearer ${spent?.key}` } });
    expect((await get(spent.url)).status).toBe(429);
    const answer = await get(other.url);
    expect(answer.status).toBe(200);
    expect(policyItem(answer.headers.get('ratelimit'))).toMatchObject({ r: 19 });
    for (const { server } of [spent, other]) expect((await server.stop()).code).toBe(0);
  });
});

describe('a REDIS_URL with no Redis behind it', SLOW, () => {
  it('stops the start-up within seconds, naming REDIS_URL', async () => {
    const database = await freshDatabase();
    databases.push(database);
    // Port 1 on loopback: nothing listens there.
    const exit = await runToExit(
      SERVICE,
      [],
      { PORT: '0', DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:1', LOG_LEVEL: 'silent' },
      45_000,
    );
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain('REDIS_URL: cannot connect to Redis');
    expect(exit.stderr).not.toContain('listening on');
  });
});
