// PostgreSQL's connections cut under the service, as a failover, a restart, an idle-session reaper or a pooler
// reset does (pg_terminate_backend on the test's own database only): the process never crashes, a request that
// met a dead connection is a 503 with Retry-After (a read is tried again on a fresh connection), the service
// serves again within 2 s, and no acknowledged write is lost; with WORKERS=2 too. Then a failover to a read-only
// server and back, and a start on a database that does not exist. Runs in the PostgreSQL leg of the suite.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runToExit, SERVICE, stopAll } from '../service/process.js';
import { admin, freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { form, load, type Service, send, servedAgain, startService } from './support.js';

const databases: TestDatabase[] = [];
afterAll(async () => {
  await stopAll();
  await Promise.all(databases.map((database) => database.drop()));
});

async function newDatabase() {
  const database = await freshPostgresDatabase();
  databases.push(database);
  return database;
}

/**
 * Terminates every backend connected to the database and waits until they have exited (termination is a signal:
 * a backend can still answer for a moment after `pg_terminate_backend` returns); resolves with how many.
 */
async function terminate(name: string): Promise<number> {
  const pids = await admin((client) =>
    client.query<{ pid: number }>(
      'select pid, pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
      [name],
    ),
  ).then((result) => result.rows.map((row) => row.pid));
  await expect
    .poll(
      () =>
        admin((client) =>
          client.query('select 1 from pg_stat_activity where pid = any($1::int[])', [pids]).then((r) => r.rowCount),
        ),
      { timeout: 10_000, interval: 20 },
    )
    .toBe(0);
  return pids.length;
}

/** The ids of the spaces stored in the database, read past the service. */
async function storedIds(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ id: string }>('select id from spaces')).rows.map((row) => Number(row.id));
  } finally {
    await client.end();
  }
}

/** How long `request` took to get `status` again (see `servedAgain`). */
async function recoveryMs(request: () => ReturnType<typeof send>, status: number, withinMs: number) {
  const started = Date.now();
  await servedAgain(request, status, withinMs);
  return Date.now() - started;
}

const listSpaces = (service: Service) => () =>
  send(`${service.origin}/api/v1/spaces`, { headers: { Authorization: `Bearer ${service.key}` } });
const createSpace = (service: Service, name: string) => () =>
  send(`${service.origin}/api/v1/spaces`, { method: 'POST', headers: form(service.key), body: `name=${name}` });

describe('PostgreSQL connections terminated three times under load', { timeout: 180_000 }, () => {
  it.each([1, 2])('WORKERS=%i: no crash, no acknowledged write lost, served again within 2 s', async (workers) => {
    const database = await newDatabase();
    const service = await startService({ DATABASE_URL: database.url, WORKERS: String(workers) });
    const traffic = load(service, 3);
    const recovery: number[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        // Some traffic on the pool's connections first, so that each round cuts connections in use.
        const seen = traffic.answers.length;
        await expect.poll(() => traffic.answers.length - seen, { timeout: 30_000 }).toBeGreaterThanOrEqual(6);
        expect(await terminate(database.name)).toBeGreaterThan(0);
        recovery.push(await recoveryMs(listSpaces(service), 200, 2_000));
        recovery.push(await recoveryMs(createSpace(service, `probe-${round}`), 201, 2_000));
      }
    } finally {
      await traffic.stop();
    }
    expect(service.server.child.exitCode).toBeNull();
    expect(service.server.stdout() + service.server.stderr()).not.toContain("Unhandled 'error' event");
    expect(recovery.every((ms) => ms < 2_000)).toBe(true);

    // Every answer is a success or a 503 that says when to retry: never a 500, never a refused connection.
    const failed = traffic.answers.filter((answer) => answer.status >= 300 || answer.status === 0);
    for (const answer of failed) {
      expect(answer).toMatchObject({ status: 503, type: '/problems/database-unavailable', retryAfter: '2' });
    }
    expect(traffic.answers.filter((answer) => answer.status < 300).length).toBeGreaterThan(failed.length);
    const stored = new Set(await storedIds(database.url));
    expect(traffic.acknowledged.length).toBeGreaterThan(0);
    expect(traffic.acknowledged.filter((id) => !stored.has(id))).toEqual([]);
    expect((await service.server.stop('SIGTERM')).code).toBe(0);
  });
});

describe('a failover to a read-only server and back', { timeout: 120_000 }, () => {
  it('answers writes 503 storage-read-only and reports not-ready, reads go on, and it recovers by itself', async () => {
    const database = await newDatabase();
    const service = await startService({ DATABASE_URL: database.url });
    expect((await createSpace(service, 'before')()).status).toBe(201);
    const setReadOnly = (on: boolean) =>
      admin((client) => client.query(`alter database ${database.name} set default_transaction_read_only = ${on}`));
    // New connections (after the "failover" cuts the old ones) reach a server whose transactions are read-only.
    await setReadOnly(true);
    await terminate(database.name);
    // A connection the pool held when its backend went away may still be handed to the next request, which then
    // fails as any lost connection does (503 database-unavailable); the connections after it are read-only.
    const answers = [];
    do answers.push(await createSpace(service, 'refused')());
    while (answers.at(-1)?.type === '/problems/database-unavailable' && answers.length < 5);
    expect(answers.at(-1)).toMatchObject({ status: 503, type: '/problems/storage-read-only', retryAfter: '5' });
    for (const lost of answers.slice(0, -1)) expect(lost).toMatchObject({ status: 503, retryAfter: '2' });
    expect((await listSpaces(service)()).status).toBe(200);
    const ready = await send(`${service.origin}/readyz`);
    expect(ready).toMatchObject({ status: 503, type: '/problems/storage-read-only' });
    expect(ready.ms).toBeLessThan(1_000);

    await setReadOnly(false);
    await terminate(database.name);
    await expect.poll(async () => (await send(`${service.origin}/readyz`)).status, { timeout: 10_000 }).toBe(200);
    await servedAgain(createSpace(service, 'after'), 201, 5_000);
    const names = ((await listSpaces(service)()).body as { data: { name: string }[] }).data.map((s) => s.name);
    expect(names).toEqual(['after', 'before']);
  });
});

describe('a start on a database that does not exist', { timeout: 60_000 }, () => {
  it('names the database and how to create it', async () => {
    const url = new URL((await newDatabase()).url);
    url.pathname = `/dss_missing_${process.pid}`;
    const exit = await runToExit(SERVICE, [], { PORT: '0', DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toContain(`PostgreSQL database "dss_missing_${process.pid}" does not exist`);
    expect(exit.stderr).toContain(`createdb -h ${url.hostname}`);
    expect(exit.stderr).not.toContain('migration');
  });
});
