// `npm run bench:instances`: throughput as instances are added, and what one request costs on PostgreSQL
// against SQLite. 1, 2 and 3 instances of the service (as npm start runs them) on one PostgreSQL database and
// one Redis, behind HAProxy with the recommended configuration (scripts/deploy/haproxy.cfg); then one instance
// alone on PostgreSQL and on SQLite. Each scenario (`show` a space, `store` one) runs autocannon in its own
// process for --duration seconds, from cold as production meets it (no warm-up). Reports req/s, p50, p99 and
// the CPU time per request of the instances, of PostgreSQL's backends, of HAProxy and of the load generator,
// and the share of the machine's CPU that other work took meanwhile (on a shared machine, read the numbers with
// it). JSON goes to bench-results/. Every child is stopped by PID at the end, on failure and on Ctrl-C.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { cpuMs, freePort, spawnChild, stopAllChildren, stopChild, waitForHttp } from './bench/children.js';
import { type Measurement, measure } from './bench/load.js';
import { UNREACHABLE_QUOTA } from './bench/targets.js';
import { haproxyConfig } from './deploy/haproxy-config.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_URL = process.env.DSS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    instances: { type: 'string', default: '1,2,3' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const counts = values.instances.split(',').map(Number);

interface Row {
  setup: string;
  scenario: string;
  result: Measurement;
  /** CPU milliseconds per request: the instances, PostgreSQL's backends, HAProxy, the load generator. */
  cpu: { service: number; postgres?: number; haproxy?: number; generator: number };
  /** Share of the machine's CPU time that went to anything but the above (and this script) during the run. */
  otherLoad: number;
}

/** Busy and total CPU ticks of the whole machine so far (/proc/stat). */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** This process's own CPU ticks and those of its children that have ended (autocannon, once it exits). */
function ownTicks(): { self: number; ended: number } {
  const stat = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ').map(Number) ?? [];
  return { self: (stat[11] ?? 0) + (stat[12] ?? 0), ended: (stat[13] ?? 0) + (stat[14] ?? 0) };
}

async function admin<T>(query: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await query(client);
  } finally {
    await client.end();
  }
}

/** The service as npm start runs it; resolves once /readyz answers 200. */
async function startInstance(env: Record<string, string>) {
  const port = await freePort();
  const child = spawnChild(process.execPath, [join(root, 'scripts/start.mjs')], {
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    RATE_LIMIT: UNREACHABLE_QUOTA,
    DSS_BUILD_DOCS: '0',
    DRAIN_DELAY_S: '0',
    FIRST_KEY_FILE: join(work, `first-key-${port}`),
    ...env,
  });
  await waitForHttp(`http://127.0.0.1:${port}/readyz`, performance.now(), 200, 90_000);
  return { port, child };
}

async function startHaproxy(ports: number[]) {
  const [bind, stats] = [await freePort(), await freePort()];
  const servers = Object.fromEntries(ports.map((port, i) => [`dss${i + 1}`, port]));
  const file = join(work, `haproxy-${ports.length}.cfg`);
  writeFileSync(file, haproxyConfig({ bind, stats, servers, retries: true }));
  const child = spawnChild('haproxy', ['-db', '-f', file]);
  const started = performance.now();
  for (;;) {
    const csv = await fetch(`http://127.0.0.1:${stats}/stats;csv`).then(
      (response) => response.text(),
      () => '',
    );
    const up = csv.split('\n').filter((line) => line.startsWith('dss,dss') && line.includes(',UP,')).length;
    if (up === ports.length) break;
    if (performance.now() - started > 30_000) throw new Error(`HAProxy did not mark ${ports.length} servers up`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port: bind, child };
}

async function waitForPort(port: number): Promise<void> {
  for (const started = performance.now(); performance.now() - started < 15_000; ) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** The PIDs of PostgreSQL's backends serving the database. */
async function backends(database: string): Promise<number[]> {
  return admin(async (client) =>
    (await client.query('select pid from pg_stat_activity where datname = $1', [database])).rows.map((r) => r.pid),
  );
}

/** Creates a key with the keys command and 200 spaces through the API; returns the key and the spaces' ids. */
async function seed(port: number, databaseUrl: string): Promise<{ key: string; ids: number[] }> {
  const output = execFileSync(process.execPath, [join(root, 'scripts/keys.mjs'), 'create', '--account', 'bench'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    encoding: 'utf8',
  });
  const key = /dss_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(output)?.[0] as string;
  const ids: number[] = [];
  for (let i = 0; i < 200; i++) {
    const response = await fetch(`http://127.0.0.1:${port}/api/v1/spaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `name=seed-${i}&color=${(i % 6) + 1}`,
    });
    ids.push(((await response.json()) as { data: { id: number } }).data.id);
  }
  return { key, ids };
}

const SCENARIOS = ['show', 'store'] as const;

/** Both scenarios against `port`, each from cold (no warm-up), with the CPU time of every part. */
async function run(
  setup: string,
  port: number,
  key: string,
  ids: number[],
  parts: { service: number[]; haproxy?: number; database?: string },
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const scenario of SCENARIOS) {
    const base = `http://127.0.0.1:${port}/api/v1`;
    const request = {
      url: scenario === 'show' ? `${base}/spaces/${ids[100]}` : `${base}/spaces`,
      method: scenario === 'show' ? 'GET' : 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        ...(scenario === 'store' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(scenario === 'store' ? { body: 'name=Benchmark&color=3' } : {}),
      connections,
    };
    const cpu = async (pids: number[]) =>
      (await Promise.all(pids.map(cpuMs))).reduce<number>((a, b) => a + (b ?? 0), 0);
    const postgresBefore = parts.database ? await backends(parts.database) : [];
    const before = {
      service: await cpu(parts.service),
      haproxy: parts.haproxy ? await cpu([parts.haproxy]) : 0,
      postgres: new Map(await Promise.all(postgresBefore.map(async (pid) => [pid, (await cpuMs(pid)) ?? 0] as const))),
      machine: machineTicks(),
      own: ownTicks(),
    };
    const result = await measure({ ...request, duration });
    const machine = machineTicks();
    const own = ownTicks();
    const service = (await cpu(parts.service)) - before.service;
    let postgres: number | undefined;
    if (parts.database) {
      postgres = 0;
      for (const pid of await backends(parts.database)) {
        postgres += ((await cpuMs(pid)) ?? 0) - (before.postgres.get(pid) ?? 0);
      }
    }
    const haproxy = parts.haproxy ? (await cpu([parts.haproxy])) - before.haproxy : undefined;
    // autocannon ran as this script's child and has been reaped: its CPU time is in this process's children's.
    const generator = (own.ended - before.own.ended) * 10;
    const measured = service + (postgres ?? 0) + (haproxy ?? 0) + generator + (own.self - before.own.self) * 10;
    const busy = (machine.busy - before.machine.busy) * 10;
    const per = (ms: number | undefined) => (ms === undefined ? undefined : ms / Math.max(1, result.requests));
    rows.push({
      setup,
      scenario,
      result,
      cpu: {
        service: per(service) as number,
        postgres: per(postgres),
        haproxy: per(haproxy),
        generator: per(generator) as number,
      },
      otherLoad: Math.max(0, busy - measured) / ((machine.total - before.machine.total) * 10),
    });
    console.log(format(rows.at(-1) as Row));
  }
  return rows;
}

const fixed = (n: number | undefined, digits = 2) => (n === undefined ? '–' : n.toFixed(digits));
const format = (row: Row) =>
  [
    row.setup.padEnd(26),
    row.scenario.padEnd(6),
    fixed(row.result.requestsPerSecond, 0).padStart(7),
    `${row.result.p50}`.padStart(4),
    `${row.result.p99}`.padStart(4),
    fixed(row.cpu.service).padStart(8),
    fixed(row.cpu.postgres).padStart(8),
    fixed(row.cpu.haproxy).padStart(8),
    fixed(row.cpu.generator).padStart(9),
    `${Math.round(row.otherLoad * 100)}%`.padStart(6),
    row.result.failures ? `  ${row.result.failures} FAILED` : '',
  ].join(' ');

const work = mkdtempSync(join(tmpdir(), 'dss-bench-instances-'));
const database = `dss_bench_instances_${process.pid}`;

async function main() {
  console.log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} on ${availableParallelism()} cores`,
  );
  await admin((client) => client.query(`create database ${database}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const redisPort = await freePort();
  spawnChild('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  await waitForPort(redisPort);
  const env = { DATABASE_URL: url.toString(), REDIS_URL: `redis://127.0.0.1:${redisPort}` };
  const first = await startInstance(env);
  const { key, ids } = await seed(first.port, env.DATABASE_URL);
  await stopChild(first.child);

  console.log(
    `${'setup'.padEnd(26)} ${'case'.padEnd(6)} ${'req/s'.padStart(7)} ${'p50'.padStart(4)} ${'p99'.padStart(4)} ` +
      'CPU ms per request: service, postgres, haproxy, generator; other load on the machine',
  );
  const rows: Row[] = [];
  for (const count of counts) {
    const instances = [];
    for (let i = 0; i < count; i++) instances.push(await startInstance(env));
    const haproxy = await startHaproxy(instances.map((instance) => instance.port));
    rows.push(
      ...(await run(`${count} behind HAProxy (pg)`, haproxy.port, key, ids, {
        service: instances.map((instance) => instance.child.pid as number),
        haproxy: haproxy.child.pid,
        database,
      })),
    );
    await Promise.all([stopChild(haproxy.child), ...instances.map((instance) => stopChild(instance.child))]);
  }

  const alone = await startInstance(env);
  rows.push(
    ...(await run('1 alone, PostgreSQL', alone.port, key, ids, { service: [alone.child.pid as number], database })),
  );
  await stopChild(alone.child);
  const sqliteUrl = `sqlite:${join(work, 'bench.sqlite')}`;
  const sqlite = await startInstance({ DATABASE_URL: sqliteUrl });
  const seeded = await seed(sqlite.port, sqliteUrl);
  rows.push(
    ...(await run('1 alone, SQLite', sqlite.port, seeded.key, seeded.ids, { service: [sqlite.child.pid as number] })),
  );
  await stopChild(sqlite.child);

  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const out = join(root, 'bench-results');
  mkdirSync(out, { recursive: true });
  const file = join(out, `instances-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ duration, connections, rows }, null, 2));
  console.log(`written to ${file}`);
}

async function cleanUp() {
  await stopAllChildren();
  await admin((client) => client.query(`drop database if exists ${database} with (force)`)).catch(() => {});
  rmSync(work, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp().finally(() => process.exit(130));
  });
}
main()
  .then(cleanUp)
  .catch(async (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    await cleanUp();
    process.exitCode = 1;
  });
