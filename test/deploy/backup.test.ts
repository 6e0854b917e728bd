// Backups taken while the service writes, restored into a fresh service: `npm run backup` and `npm run restore`
// on SQLite (SQLite's online backup), pg_dump and pg_restore on PostgreSQL (scripts/deploy/OPERATIONS.md "Backups"). Every create
// acknowledged before the backup began is in the restored database, none acknowledged after it ended, and the
// restored records are a gapless prefix of the committed ones (one consistent snapshot). Both engines in
// every run: one CI leg only.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { runToExit, stopAll } from '../service/process.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { origin, startReady } from './service.js';

const run = promisify(execFile);
let work: string;
const databases: TestDatabase[] = [];
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'dss-backup-'));
});
afterAll(async () => {
  await stopAll();
  await Promise.all(databases.map((database) => database.drop()));
  rmSync(work, { recursive: true, force: true });
});

const ENV = { RATE_LIMIT: 'off', LOG_LEVEL: 'warn' };

interface Ack {
  id: number;
  at: number;
}

/** Writers creating spaces until stopped; each 201's id with the time it arrived. */
function writers(api: string, key: string, count: number) {
  const acks: Ack[] = [];
  let stopping = false;
  const loops = Array.from({ length: count }, async (_, writer) => {
    for (let n = 0; !stopping; n++) {
      const response = await fetch(`${api}/spaces`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: `name=w${writer}-${n}&color=${(n % 6) + 1}`,
      });
      const body = await response.json();
      if (response.status !== 201) throw new Error(`create answered ${response.status}: ${JSON.stringify(body)}`);
      acks.push({ id: body.data.id, at: Date.now() });
    }
  });
  return {
    acks,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      return acks;
    },
  };
}

/** Every space id of the account, walked by cursor through the API, and the list's total. */
async function allIds(port: number, key: string): Promise<{ ids: number[]; total: number }> {
  const ids: number[] = [];
  let total = -1;
  for (let path: string | null = '/api/v1/spaces?per_page=100&sort_by=id&sort=asc&after='; path; ) {
    const response: Response = await fetch(`${origin(port)}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(200);
    const page = (await response.json()) as {
      data: { id: number }[];
      meta: { total: number };
      links: { next: string | null };
    };
    ids.push(...page.data.map((space) => space.id));
    total = page.meta.total;
    path = page.links.next;
  }
  return { ids, total };
}

/** Runs `backup` while writers write; restores with `restore`; reads the result through a fresh service. */
async function backupUnderLoad(
  database: TestDatabase,
  backup: () => Promise<void>,
  restore: () => Promise<TestDatabase>,
  // SQLite allocates an id inside its one write lock, so ids commit in order; PostgreSQL's sequence hands out ids
  // before the transactions that use them commit, in any order (a create now also writes its event).
  idsCommitInOrder: boolean,
) {
  const port = await freePort();
  const service = await startReady(port, { ...ENV, DATABASE_URL: database.url });
  await expect.poll(() => service.firstKey(), { timeout: 30_000 }).toBeDefined();
  const key = service.firstKey() as string;
  const api = `${origin(port)}/api/v1`;
  const load = writers(api, key, 6);
  await expect.poll(() => load.acks.length, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(300);
  const began = Date.now();
  await backup();
  const ended = Date.now();
  await expect.poll(() => load.acks.filter((ack) => ack.at > ended).length, { timeout: 30_000 }).toBeGreaterThan(20);
  const acks = await load.stop();
  expect((await service.stop('SIGTERM')).code).toBe(0);

  const restored = await restore();
  const restoredPort = await freePort();
  await startReady(restoredPort, { ...ENV, DATABASE_URL: restored.url });
  const { ids, total } = await allIds(restoredPort, key);
  const present = new Set(ids);
  const before = acks.filter((ack) => ack.at < began);
  const after = acks.filter((ack) => ack.at > ended);
  const newest = Math.max(...ids);
  const during = acks.length - before.length - after.length;
  console.log(
    `${acks.length} creates acknowledged: ${before.length} before the backup began (all restored), ` +
      `${during} while it ran (${acks.filter((a) => a.at >= began && a.at <= ended && present.has(a.id)).length} ` +
      `restored), ${after.length} after it ended (none restored); backup took ${ended - began} ms`,
  );
  expect(before.filter((ack) => !present.has(ack.id))).toEqual([]);
  expect(after.filter((ack) => present.has(ack.id))).toEqual([]);
  // One snapshot: where ids commit in order, every acknowledged create up to the newest restored one is there.
  if (idsCommitInOrder) expect(acks.filter((ack) => ack.id <= newest && !present.has(ack.id))).toEqual([]);
  // And the count agrees with the records.
  expect(total).toBe(ids.length);
}

describe('backups under write load', { timeout: 240_000 }, () => {
  it('restores from `npm run backup` every SQLite record acknowledged before the backup', async () => {
    const database = await freshDatabase('sqlite');
    databases.push(database);
    const file = join(work, 'backup.sqlite');
    await backupUnderLoad(
      database,
      async () => {
        const exit = await runToExit('scripts/backup.mjs', [file], { DATABASE_URL: database.url });
        expect(exit.code, exit.stderr).toBe(0);
        expect(exit.stdout).toMatch(/^Backed up .* integrity ok: 1 accounts, 1 keys, 0 domains, \d+ spaces/);
        // It holds the webhook signing secrets: the owner's only, whatever the umask.
        expect(statSync(file).mode & 0o777).toBe(0o600);
      },
      async () => {
        const restored = await freshDatabase('sqlite');
        databases.push(restored);
        const exit = await runToExit('scripts/backup.mjs', ['--restore', file], { DATABASE_URL: restored.url });
        expect(exit.code, exit.stderr).toBe(0);
        // Never over a database that exists.
        const again = await runToExit('scripts/backup.mjs', ['--restore', file], { DATABASE_URL: restored.url });
        expect(again.code).toBe(1);
        expect(again.stderr).toContain('A database exists at');
        return restored;
      },
      true,
    );
  });

  it('restores from pg_dump with pg_restore every PostgreSQL record acknowledged before the dump', async () => {
    const database = await freshDatabase('postgres');
    databases.push(database);
    const file = join(work, 'backup.pgdump');
    await backupUnderLoad(
      database,
      async () => {
        // As OPERATIONS writes it: under umask 077, so the dump (signing secrets included) is the owner's only.
        await run(
          'sh',
          ['-c', 'umask 077 && pg_dump --format=custom --file="$1" --dbname="$2"', 'sh', file, database.url],
          {
            timeout: 60_000,
          },
        );
        expect(statSync(file).mode & 0o777).toBe(0o600);
      },
      async () => {
        const restored = await freshDatabase('postgres');
        databases.push(restored);
        await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restored.url}`, file], {
          timeout: 60_000,
        });
        return restored;
      },
      false,
    );
  });
});
