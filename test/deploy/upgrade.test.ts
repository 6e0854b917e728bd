// A rolling upgrade from the previous release (.ci/previous-release), as an operator does it: that release
// installed from this clone's git history, three instances of it on a fresh PostgreSQL database and one Redis
// behind HAProxy without retries, clients storing, reading, updating and deleting every resource (spaces, domains,
// webhook endpoints, the event log) through it; then each instance in turn drained, stopped and started again from
// this checkout (the first migrates the schema while the old ones serve), and one rolled back to the release.
// Fails on any failed request, any acknowledged write missing or changed at the end, and any refused start; prints
// the figures per phase. Always on PostgreSQL: one CI leg only. Everything is stopped by PID.

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { KEY_PATTERN, type Running, runToExit, stopAll } from '../service/process.js';
import { freshPostgresDatabase, type TestDatabase } from '../support/database.js';
import { type Installed, installRelease, previousRelease } from '../support/previous-release.js';
import { failed, figures, type Resource, startLoad, type Written } from './every-resource-load.js';
import { ensureHaproxy, type Haproxy, startHaproxy } from './haproxy.js';
import { startRedis } from './redis-server.js';
import { origin, startReady } from './service.js';

const haproxyHere = ensureHaproxy();
if (!haproxyHere && !process.env.CI) console.warn('upgrade.test.ts: skipped, HAProxy could not be installed.');

const NAMES = ['dss1', 'dss2', 'dss3'] as const;
type Name = (typeof NAMES)[number];
const CLIENTS = 8;
/** HAProxy marks an instance down within inter + fastinter (1.25 s) of its first 503: 3 s leave a margin. */
const DRAIN_DELAY_S = '3';
const release = previousRelease();
const tag = `upg${Date.now().toString(36)}`;

let started = 0;
let installed: Installed;
let work: string;
let database: TestDatabase;
let redis: Awaited<ReturnType<typeof startRedis>>;
let receiver: Server;
let delivered = 0;
let balancer: Haproxy;
let env: Record<string, string>;
const ports = {} as Record<Name, number>;
const instances = {} as Record<Name, Running>;
const versionOf = {} as Record<Name, string>;
/** The error lines the instances logged (pino's level 50 and up), of stopped instances too. */
const errorLines: string[] = [];
const keepErrors = (name: Name, output: string) =>
  errorLines.push(
    ...output
      .split('\n')
      .filter((line) => /"level":("error"|"fatal"|50|60)/.test(line))
      .map((line) => `${name}: ${line}`),
  );
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts the instance from the release's install or from this checkout; throws if it does not become ready. */
async function start(name: Name, from: 'release' | 'checkout'): Promise<void> {
  instances[name] = await startReady(ports[name], env, from === 'release' ? installed.dir : undefined);
  versionOf[name] = from === 'release' ? release.version : 'checkout';
}

beforeAll(async () => {
  started = Date.now();
  if (!haproxyHere && !process.env.CI) return;
  if (!haproxyHere) throw new Error('HAProxy is missing and could not be installed (apt-get install haproxy)');
  installed = installRelease(release, { exactPackages: true });
  work = mkdtempSync(join(tmpdir(), 'dss-upgrade-'));
  database = await freshPostgresDatabase();
  redis = await startRedis();
  receiver = createServer((request, response) => {
    delivered++;
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  for (const name of NAMES) ports[name] = await freePort();
  env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    RATE_LIMIT: '100000/60',
    TRUST_PROXY: 'loopback',
    DRAIN_DELAY_S,
    SHUTDOWN_GRACE_S: '10',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    WEBHOOK_MAX_ENDPOINTS: '1000',
  };
  // As compose.yaml starts them: the first migrates the schema, then the others.
  await start('dss1', 'release');
  await Promise.all([start('dss2', 'release'), start('dss3', 'release')]);
  balancer = startHaproxy(
    { bind: await freePort(), stats: await freePort(), servers: ports as Record<string, number>, retries: false },
    join(work, 'haproxy.cfg'),
  );
  await Promise.all(NAMES.map((name) => balancer.waitFor(name, 'UP')));
}, 600_000);

afterAll(async () => {
  await balancer?.stop();
  await stopAll();
  await redis?.stop();
  if (receiver) await new Promise((resolve) => receiver.close(resolve));
  await database?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
  installed?.remove();
});

/** Keys made by the release's own keys command, as an operator of it would. */
async function releaseKeys(accounts: string[]): Promise<string[]> {
  return Promise.all(
    accounts.map(async (account) => {
      const run = await runToExit(join(installed.dir, 'scripts/keys.mjs'), ['create', '--account', account], {
        DATABASE_URL: database.url,
      });
      const key = run.stdout.match(KEY_PATTERN)?.[0];
      if (!key) throw new Error(`the release's keys command made no key:\n${run.stdout}\n${run.stderr}`);
      return key;
    }),
  );
}

/** The acknowledged writes missing or different in the database: each record's last acknowledged state. */
async function lostWrites(written: Written[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const lost: string[] = [];
    const tables: Record<Resource, string> = {
      spaces: 'spaces',
      domains: 'domains',
      'webhook-endpoints': 'webhook_endpoints',
    };
    for (const [resource, table] of Object.entries(tables) as [Resource, string][]) {
      const mine = written.filter((w) => w.resource === resource);
      const field = mine[0]?.field;
      if (!field) continue;
      const { rows } = await client.query(`select id, ${field} as value from ${table} where id = any($1)`, [
        mine.map((w) => w.id),
      ]);
      const stored = new Map(rows.map((row) => [Number(row.id), row.value]));
      for (const w of mine) {
        if (w.deleted && stored.has(w.id)) lost.push(`${resource} ${w.id}: deleted (204), still there`);
        if (!w.deleted && !stored.has(w.id)) lost.push(`${resource} ${w.id}: stored (201), gone`);
        if (!w.deleted && stored.has(w.id) && stored.get(w.id) !== w.value) {
          lost.push(
            `${resource} ${w.id}: ${field} ${JSON.stringify(stored.get(w.id))}, acknowledged ${JSON.stringify(w.value)}`,
          );
        }
      }
    }
    return lost;
  } finally {
    await client.end();
  }
}

describe.skipIf(!haproxyHere && !process.env.CI)(`a rolling upgrade from release ${release.version}`, () => {
  it('upgrades three instances in turn and rolls one back under load, with no failed request and no lost write', {
    timeout: 600_000,
  }, async () => {
    // An account per client: its requests come one at a time, as one client's do.
    const keys = await releaseKeys(Array.from({ length: CLIENTS }, (_, client) => `client${client}`));
    let phase = `3 × ${release.version}`;
    const api = `${origin(balancer.port)}/api/v1`;
    const webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    const load = startLoad({ api, keys, clients: CLIENTS, tag, webhookUrl }, () => phase);
    const steps: string[] = [];
    /** Drains and stops the instance, starts it from `to`, and waits until the balancer sends it requests. */
    const replace = async (name: Name, to: 'release' | 'checkout') => {
      const signalled = Date.now();
      const exit = await instances[name].stop('SIGTERM', 60_000);
      keepErrors(name, exit.stdout);
      expect(exit.code, exit.stdout + exit.stderr).toBe(0);
      const exited = Date.now();
      await start(name, to);
      const up = await balancer.waitFor(name, 'UP');
      steps.push(`${name} to ${versionOf[name]}: drained in ${exited - signalled} ms, serving ${up - exited} ms later`);
    };
    try {
      await pause(3000);
      for (const name of NAMES) {
        phase = `${name} to the checkout`;
        await replace(name, 'checkout');
        phase = `after ${name}: ${NAMES.map((n) => versionOf[n]).join(', ')}`;
        await pause(2000);
      }
      phase = `dss1 rolled back to ${release.version}`;
      await replace('dss1', 'release');
      phase = `after the rollback: ${NAMES.map((n) => versionOf[n]).join(', ')}`;
      await pause(3000);
    } finally {
      await load.stop();
    }
    const failures = load.requests.filter(failed);
    for (const name of NAMES) keepErrors(name, instances[name].stdout());
    const lost = await lostWrites(load.written);
    const { byPhase, byOperation } = figures(load.requests);
    console.log(
      `rolling upgrade ${release.version} (${release.commit.slice(0, 7)}) to the checkout and one rollback, ` +
        `${CLIENTS} clients through HAProxy without retries: ${load.requests.length} requests, ` +
        `${failures.length} failed, ${load.written.length} records stored, ${lost.length} lost; ` +
        `${delivered} webhook deliveries received; release's packages ${installed.packages}; ` +
        `${Math.round((Date.now() - started) / 1000)} s in all`,
      byPhase,
      byOperation,
      steps,
      figures(failures).byOutcome,
      errorLines.slice(0, 10),
    );
    expect(load.requests.length).toBeGreaterThan(500);
    expect(new Set(load.written.map((w) => w.resource))).toEqual(new Set(['spaces', 'domains', 'webhook-endpoints']));
    expect(
      failures
        .slice(0, 20)
        .map((f) => `${f.phase}: ${f.operation} ${f.status ?? f.error} ${f.problem ?? ''} (expected ${f.expected})`),
    ).toEqual([]);
    expect(lost.slice(0, 20)).toEqual([]);
  });
});
