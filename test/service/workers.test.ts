// WORKERS=2: the real entry point as a primary and two worker processes on one port, on the engine under test.
// The rules that depend on shared state still hold across processes (uniqueness, account isolation, key
// revocation; a key's quota, counted in the primary when there is no Redis), a worker that dies is replaced, and
// SIGTERM stops them all.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey, KEY_CACHE_TTL_MS, revokeKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, runScript, SERVICE, stopAll } from './process.js';

// Three processes load the service (a few seconds each on a busy machine).
const SLOW = { timeout: 120_000 };

let database: TestDatabase;
let db: Database;
let server: Running;
let api: string;
let serviceOrigin: string;
let metricsUrl: string;
const METRICS_TOKEN = 'workers-metrics-token-0123456789';
const QUOTA = 30;

beforeAll(async () => {
  database = await freshDatabase();
  server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    LOG_LEVEL: 'error',
    WORKERS: '2',
    // Above what any other test here sends with one key; the quota test spends a key's all.
    RATE_LIMIT: `${QUOTA}/600`,
    METRICS_PORT: '0',
    METRICS_TOKEN,
  });
  const [, origin, metricsAt] = await server.waitForOutput(
    /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/,
    120_000,
  );
  api = `${origin}/api/v1`;
  serviceOrigin = origin as string;
  metricsUrl = metricsAt as string;
  db = openDatabase(database.url);
}, 150_000);

afterAll(async () => {
  await stopAll();
  await db?.destroy();
  await database?.drop();
});

/** The worker processes of the primary (any other child left out). */
function workerPids(): number[] {
  const lines = execFileSync('ps', ['--ppid', String(server.child.pid), '-o', 'pid=,args='], { encoding: 'utf8' });
  return lines
    .split('\n')
    .filter((line) => line.includes(SERVICE))
    .map((line) => Number.parseInt(line.trim(), 10));
}

async function newKey(account: string): Promise<string> {
  return (await issueKey(db, account)).key;
}

function call(key: string, method: string, path: string, form?: Record<string, string>): Promise<Response> {
  return fetch(`${api}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(form ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    body: form ? new URLSearchParams(form).toString() : undefined,
  });
}

/** `count` requests at once, so that both workers get some. */
const all = (count: number, send: () => Promise<Response>) =>
  Promise.all(Array.from({ length: count }, async () => (await send()).status));

describe('WORKERS=2', SLOW, () => {
  it('serves from two worker processes under the primary', () => {
    expect(workerPids()).toHaveLength(2);
  });

  it("holds a key's quota across both workers without Redis: the primary keeps the count", async () => {
    const key = await newKey('quota');
    const answers = await Promise.all(Array.from({ length: QUOTA + 10 }, () => call(key, 'GET', '/spaces')));
    const served = answers.filter((answer) => answer.status === 200);
    expect(served).toHaveLength(QUOTA);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(10);
    // One count: each answer served says another number of requests left, from QUOTA - 1 down to 0.
    const left = served.map((answer) => Number(/\br=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1]));
    expect(left.sort((a, b) => a - b)).toEqual(Array.from({ length: QUOTA }, (_, i) => i));
  });

  it("still bounds a key's quota while the primary is stopped, each worker holding its share", async () => {
    /** QUOTA + 10 requests on fresh connections (both workers get some): the statuses, and the quota left each says. */
    const burst = async (key: string) => {
      const answers = await Promise.all(
        Array.from({ length: QUOTA + 10 }, () =>
          fetch(`${api}/spaces`, { headers: { Authorization: `Bearer ${key}` }, keepalive: false }),
        ),
      );
      const served = answers.filter((answer) => answer.status === 200);
      return {
        statuses: new Set(answers.map((answer) => answer.status)),
        served: served.length,
        left: served.map((answer) => Number(/\br=(\d+)/.exec(answer.headers.get('ratelimit') ?? '')?.[1])),
      };
    };
    const stalled = await newKey('stalled');
    const primary = server.child.pid as number;
    process.kill(primary, 'SIGSTOP');
    let during: Awaited<ReturnType<typeof burst>>;
    try {
      during = await burst(stalled);
    } finally {
      process.kill(primary, 'SIGCONT');
    }
    // Neither every request let through (the library's store alone, under passOnStoreError) nor none.
    expect([...during.statuses].sort()).toEqual([200, 429]);
    expect(during.served).toBeGreaterThanOrEqual(QUOTA / 2);
    expect(during.served).toBeLessThanOrEqual(QUOTA);
    // Once the primary answers again, a fresh key's requests are counted once more in one place: QUOTA - 1 down to 0.
    await expect
      .poll(async () => (await burst(await newKey('resumed'))).left.sort((a, b) => a - b), {
        timeout: 30_000,
        interval: 500,
      })
      .toEqual(Array.from({ length: QUOTA }, (_, i) => i));
  });

  it('creates a domain name exactly once when creates race across workers', async () => {
    const key = await newKey('racer');
    const statuses = await all(20, () => call(key, 'POST', '/domains', { name: 'race.example.com' }));
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const list = await (await call(key, 'GET', '/domains?search=race.example.com')).json();
    expect(list.meta.total).toBe(1);
  });

  it("keeps each account's records to itself on every worker", async () => {
    const owner = await newKey('owner');
    const other = await newKey('other');
    const created = await (await call(owner, 'POST', '/spaces', { name: 'Private', color: '2' })).json();
    const id = created.data.id as number;
    expect(await all(6, () => call(other, 'GET', `/spaces/${id}`))).toEqual(Array(6).fill(404));
    expect(await all(4, () => call(other, 'PATCH', `/spaces/${id}`, { color: '5' }))).toEqual(Array(4).fill(404));
    expect(await all(4, () => call(other, 'DELETE', `/spaces/${id}`))).toEqual(Array(4).fill(404));
    const lists = await Promise.all(
      Array.from({ length: 4 }, async () => (await (await call(other, 'GET', '/spaces')).json()).meta.total),
    );
    expect(lists).toEqual([0, 0, 0, 0]);
    const shown = await (await call(owner, 'GET', `/spaces/${id}`)).json();
    expect(shown.data).toMatchObject({ name: 'Private', color: 2 });
  });

  it('answers the same problems from every worker', async () => {
    const key = await newKey('rules');
    expect(await all(4, () => call(key, 'POST', '/spaces', { name: 'x', color: '9' }))).toEqual(Array(4).fill(422));
    expect(await all(4, () => call('not-a-key', 'GET', '/spaces'))).toEqual(Array(4).fill(401));
    expect(await all(4, () => call(key, 'POST', '/spaces/1'))).toEqual(Array(4).fill(405));
  });

  it("counts every worker's requests in /metrics, on METRICS_PORT and on the service's port", async () => {
    const healthzCount = (text: string) =>
      Number(/^http_requests_total\{operation_id="\/healthz",status="200"\} (\d+)$/m.exec(text)?.[1] ?? 0);
    const before = healthzCount(await (await fetch(metricsUrl)).text());
    // On fresh connections each, so that both workers answer some.
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async () => (await fetch(`${serviceOrigin}/healthz`, { keepalive: false })).status),
    );
    expect(statuses).toEqual(Array(20).fill(200));
    expect(healthzCount(await (await fetch(metricsUrl)).text()) - before).toBe(20);
    // The service's port: whichever worker answers gives the sum over both.
    const fromWorker = await fetch(`${serviceOrigin}/metrics`, {
      headers: { Authorization: `Bearer ${METRICS_TOKEN}` },
    });
    expect(fromWorker.status).toBe(200);
    expect(healthzCount(await fromWorker.text()) - before).toBe(20);
  });

  it('shuts a revoked key out of every worker within the key cache lifetime', async () => {
    const key = await newKey('revokee');
    // Both workers now hold the key as valid in their caches.
    expect(await all(8, () => call(key, 'GET', '/spaces'))).toEqual(Array(8).fill(200));
    expect(await revokeKey(db, key)).toBe(true);
    // Not a wait for an event but the property's premise: once the cache lifetime has passed (twice over), both
    // workers refuse it. A poll would state less ("refused within its bound").
    await new Promise((resolve) => setTimeout(resolve, 2 * KEY_CACHE_TTL_MS));
    expect(await all(8, () => call(key, 'GET', '/spaces'))).toEqual(Array(8).fill(401));
  });

  it('replaces a worker that dies, and keeps serving meanwhile', async () => {
    const key = await newKey('survivor');
    const [victim, survivor] = workerPids() as [number, number];
    process.kill(victim, 'SIGKILL');
    // (The client's kept-alive connections to the victim close with it; new requests go to the survivor.)
    await expect.poll(() => existsSync(`/proc/${victim}`), { timeout: 10_000 }).toBe(false);
    // Served meanwhile: a request that went out on a kept-alive connection to the victim before the client saw it
    // close fails in the client and is sent again (bounded).
    await expect
      .poll(() => all(4, () => call(key, 'GET', '/spaces')), { timeout: 10_000, interval: 100 })
      .toEqual(Array(4).fill(200));
    await expect.poll(() => workerPids().sort(), { timeout: 60_000, interval: 250 }).toHaveLength(2);
    const now = workerPids();
    expect(now).toContain(survivor);
    expect(now).not.toContain(victim);
    await expect.poll(() => server.stdout(), { timeout: 5_000 }).toContain('worker exited unexpectedly');
  });

  it('stops every worker and exits 0 on SIGTERM', async () => {
    const pids = workerPids();
    const exit = await server.stop('SIGTERM', 30_000);
    expect(exit.code).toBe(0);
    for (const pid of pids) expect(existsSync(`/proc/${pid}`)).toBe(false);
  });
});
