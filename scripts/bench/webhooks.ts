// Webhook delivery under load, against the service as `npm start` runs it (a child process on a fresh SQLite file,
// or DATABASE_URL), driven over HTTP only, so the same script measures any checkout (`--root ../baseline`):
//   1. fairness: a noisy account (20 endpoints that never answer, a burst of changes within its quota) beside a
//      quiet one whose receiver answers at once: the quiet account's delivery latency, p50 and p99;
//   2. throughput: one account, one fast receiver, the API taking creates as fast as C clients can send them for
//      S seconds: creates per second against deliveries per second, and how long the backlog takes to drain;
//   3. pruning: events (with a delivery and an attempt each) past EVENT_RETENTION_DAYS, seeded straight into the
//      database, and how many the service deletes per second once it starts.
// `npm run bench:webhooks -- [--root DIR] [--only fairness,throughput,pruning] [--seconds 10] [--clients 8]`
//   `[--database postgres] [--instances 2]`: throughput on a new PostgreSQL database (DSS_TEST_POSTGRES_URL's
//   server, dropped after) with that many instances, the clients spread over them (fairness and pruning: SQLite).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { issueKey } from '../../server/accounts/keys.js';
import { openDatabase } from '../../server/db/database.js';
import { freePort, spawnChild, stopAllChildren, stopChild, waitForHttp } from './children.js';
import { scratchPostgres } from './postgres-scratch.js';
import { seedPastRetention } from './seed-past-retention.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: '.' },
    only: { type: 'string', default: 'fairness,throughput,pruning' },
    seconds: { type: 'string', default: '10' },
    clients: { type: 'string', default: '8' },
    'noisy-changes': { type: 'string', default: '100' },
    'quiet-changes': { type: 'string', default: '20' },
    'prune-events': { type: 'string', default: '50000' },
    database: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1' },
  },
});
const ROOT = resolve(values.root);
const ONLY = new Set(values.only.split(','));
const SECONDS = Number(values.seconds);
const CLIENTS = Number(values.clients);
/** The longest wait for one of the quiet account's deliveries before it counts as not arrived. */
const QUIET_CAP_MS = 30_000;

interface Service {
  api: string;
  /** Every instance's API (one but for throughput on PostgreSQL with --instances). */
  apis: string[];
  databaseUrl: string;
  stop(): Promise<void>;
}

/** The service of ROOT on a fresh SQLite file, with `env` over the bench's settings. */
async function startService(env: Record<string, string>, seed?: (dbFile: string) => Promise<void>): Promise<Service> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-webhooks-'));
  const dbFile = join(dir, 'bench.sqlite');
  if (seed) await seed(dbFile);
  const databaseUrl = `sqlite:${dbFile}`;
  const instance = await startInstance(databaseUrl, dir, env);
  return {
    api: instance.api,
    apis: [instance.api],
    databaseUrl,
    async stop() {
      await instance.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `count` instances of ROOT's service on a new PostgreSQL database, started one after the other; dropped at stop. */
async function startOnPostgres(env: Record<string, string>, count: number): Promise<Service> {
  const database = await scratchPostgres(
    process.env.DSS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    'dss_bench_webhooks',
  );
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-webhooks-'));
  const instances: Array<{ api: string; stop(): Promise<void> }> = [];
  const stop = async () => {
    for (const instance of instances) await instance.stop();
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  };
  try {
    for (let i = 0; i < count; i++) instances.push(await startInstance(database.url, dir, env));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    api: instances[0]?.api ?? '',
    apis: instances.map((i) => i.api),
    databaseUrl: database.url,
    stop,
  };
}

async function startInstance(databaseUrl: string, dir: string, env: Record<string, string>) {
  const port = await freePort();
  const child = spawnChild(process.execPath, ['--import', 'tsx', join(ROOT, 'server/main.ts')], {
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    FIRST_KEY_FILE: join(dir, 'first-key'),
    RATE_LIMIT: 'off',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    DOMAIN_CHECKS: 'off',
    ...env,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitForHttp(`${origin}/readyz`, performance.now(), 200, 120_000);
  return { api: `${origin}/api/v1`, stop: () => stopChild(child) };
}

async function anotherKey(service: Service, name: string): Promise<string> {
  const db = openDatabase(service.databaseUrl);
  try {
    return (await issueKey(db, name)).key;
  } finally {
    await db.destroy();
  }
}

function client(api: string, key: string) {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  return async (method: string, path: string, body?: unknown) => {
    const init = body === undefined ? { method, headers } : { method, headers, body: JSON.stringify(body) };
    const response = await fetch(`${api}${path}`, init);
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 300)}`);
    return text ? (JSON.parse(text) as { data: { id: number } }) : undefined;
  };
}

/** A receiver on 127.0.0.1: records when each space's event arrived; `hang` takes requests and never answers. */
async function receiver(hang = false) {
  const arrived = new Map<number, number>();
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    if (hang) return;
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const event = JSON.parse(body) as { type: string; data: { object?: { id: number } } };
      if (event.type === 'space.created' && event.data.object) arrived.set(event.data.object.id, performance.now());
      res.end('ok');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    arrived,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((done) => server.close(() => done()));
    },
  };
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(0)} ms` : `> ${QUIET_CAP_MS / 1000} s`);

async function fairness(): Promise<void> {
  const service = await startService({ WEBHOOK_TIMEOUT_S: '5' });
  const hanging = await receiver(true);
  const healthy = await receiver();
  try {
    const noisy = client(service.api, await anotherKey(service, 'bench'));
    const quiet = client(service.api, await anotherKey(service, 'quiet'));
    for (let i = 0; i < 20; i++)
      await noisy('POST', '/webhook-endpoints', { url: `${hanging.url}?n=${i}`, enabled_events: ['*'] });
    await quiet('POST', '/webhook-endpoints', { url: healthy.url, enabled_events: ['*'] });
    const noisyChanges = Number(values['noisy-changes']);
    for (let i = 0; i < noisyChanges; i++) await noisy('POST', '/spaces', { name: `noisy ${i}` });
    // The quiet account changes something every 250 ms while the noisy account's deliveries hang.
    const answered = new Map<number, number>();
    for (let i = 0; i < Number(values['quiet-changes']); i++) {
      const reply = await quiet('POST', '/spaces', { name: `quiet ${i}` });
      answered.set(reply?.data.id ?? 0, performance.now());
      await new Promise((r) => setTimeout(r, 250));
    }
    const deadline = performance.now() + QUIET_CAP_MS;
    while (healthy.arrived.size < answered.size && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const latencies = [...answered]
      .map(([id, at]) => (healthy.arrived.has(id) ? (healthy.arrived.get(id) ?? 0) - at : Number.POSITIVE_INFINITY))
      .sort((a, b) => a - b);
    console.log(
      `fairness: noisy account 20 hanging endpoints × ${noisyChanges} changes (${20 * noisyChanges} deliveries, WEBHOOK_TIMEOUT_S=5); ` +
        `quiet account's ${answered.size} deliveries: p50 ${ms(percentile(latencies, 50))}, p99 ${ms(percentile(latencies, 99))}, ` +
        `${latencies.filter((l) => !Number.isFinite(l)).length} not arrived within ${QUIET_CAP_MS / 1000} s; hanging requests seen ${hanging.requests()}`,
    );
  } finally {
    await hanging.close();
    await healthy.close();
    await service.stop();
  }
}

async function throughput(): Promise<void> {
  const service =
    values.database === 'postgres' ? await startOnPostgres({}, Number(values.instances)) : await startService({});
  const fast = await receiver();
  try {
    const key = await anotherKey(service, 'bench');
    const apis = service.apis.map((api) => client(api, key));
    const api = apis[0];
    if (!api) throw new Error('no instance');
    await api('POST', '/webhook-endpoints', { url: fast.url, enabled_events: ['*'] });
    const answered = new Map<number, number>();
    const started = performance.now();
    const until = started + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: CLIENTS }, async (_, c) => {
        for (let i = 0; performance.now() < until; i++) {
          const reply = await (apis[c % apis.length] ?? api)('POST', '/spaces', { name: `load ${c} ${i}` });
          answered.set(reply?.data.id ?? 0, performance.now());
        }
      }),
    );
    const writing = (performance.now() - started) / 1000;
    const duringWrites = [...fast.arrived.values()].filter((at) => at <= started + writing * 1000).length;
    const drainDeadline = performance.now() + 120_000;
    while (fast.arrived.size < answered.size && performance.now() < drainDeadline)
      await new Promise((r) => setTimeout(r, 20));
    const drained = (performance.now() - started) / 1000;
    console.log(
      `throughput (${values.database === 'postgres' ? `postgres, ${values.instances} instances` : 'sqlite'}): ${CLIENTS} clients for ${writing.toFixed(1)} s: ${(answered.size / writing).toFixed(0)} creates/s; ` +
        `${(duringWrites / writing).toFixed(0)} deliveries/s while writing; all ${fast.arrived.size} of ${answered.size} delivered ${drained.toFixed(1)} s after the start ` +
        `(${(fast.arrived.size / drained).toFixed(0)} deliveries/s overall)`,
    );
  } finally {
    await fast.close();
    await service.stop();
  }
}

async function pruning(): Promise<void> {
  const count = Number(values['prune-events']);
  const seed = async (dbFile: string) => {
    const { migrateToLatest } = await import(join(ROOT, 'server/db/migrations.ts'));
    const db = openDatabase(`sqlite:${dbFile}`);
    try {
      await migrateToLatest(db);
      const { account } = await issueKey(db, 'pruned');
      await seedPastRetention(db, account.id, { events: count, payload: '{}' });
    } finally {
      await db.destroy();
    }
  };
  const service = await startService({ EVENT_RETENTION_DAYS: '30' }, seed);
  try {
    const db = openDatabase(service.databaseUrl);
    const started = performance.now();
    let left = count;
    const deadline = started + 30_000;
    while (left > 0 && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      const row = await db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      left = Number(row.n);
    }
    const seconds = (performance.now() - started) / 1000;
    await db.destroy();
    console.log(
      `pruning: ${count - left} of ${count} events past retention (each with a delivery and an attempt) deleted in ${seconds.toFixed(1)} s ` +
        `after the service answered: ${((count - left) / seconds).toFixed(0)} events/s${left > 0 ? ` (${left} left when the bench stopped waiting)` : ''}`,
    );
  } finally {
    await service.stop();
  }
}

console.log(`bench:webhooks on ${ROOT}`);
try {
  if (ONLY.has('fairness')) await fairness();
  if (ONLY.has('throughput')) await throughput();
  if (ONLY.has('pruning')) await pruning();
} finally {
  await stopAllChildren();
}
