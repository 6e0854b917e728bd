// WORKERS=2 under load, a worker killed outright (SIGKILL) three times: no connection is left hanging (each
// request is answered or fails at once; none waits out its timeout), and the primary's summed request counter
// never goes down, though the dead worker's own counts went with it.
import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, runScript, SERVICE, stopAll } from './process.js';

/** Far above any honest answer of /healthz on a busy machine: a request still open then is hanging. */
const HUNG_MS = 15_000;
const CLIENTS = 8;
const KILLS = 3;

let database: TestDatabase;
let server: Running;
let origin: string;
let metricsUrl: string;

beforeAll(async () => {
  database = await freshDatabase('sqlite');
  server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    LOG_LEVEL: 'error',
    WORKERS: '2',
    RATE_LIMIT: 'off',
    METRICS_PORT: '0',
  });
  const [, at, metricsAt] = await server.waitForOutput(
    /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/,
    120_000,
  );
  origin = at as string;
  metricsUrl = metricsAt as string;
}, 150_000);
afterAll(async () => {
  await stopAll();
  await database?.drop();
});

const workerPids = (): number[] =>
  execFileSync('ps', ['--ppid', String(server.child.pid), '-o', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(SERVICE))
    .map((line) => Number.parseInt(line.trim(), 10));

/** http_requests_total summed over every label set, as the primary reports it. */
async function requestsCounted(): Promise<number> {
  const text = await (await fetch(metricsUrl)).text();
  return [...text.matchAll(/^http_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, [, n]) => sum + Number(n), 0);
}

type Outcome = 'answered' | 'failed' | 'hung';

/** One request on a connection of its own (the case a dying worker may leave open). */
const healthz = () =>
  new Promise<Outcome>((resolve) => {
    const req = get(`${origin}/healthz`, { agent: false, timeout: HUNG_MS }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? 'answered' : 'failed'));
      res.on('error', () => resolve('failed'));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('hung');
    });
    req.on('error', () => resolve('failed'));
  });

describe('a worker killed under load, three times', () => {
  it('leaves no connection hanging, and the summed counters never go down', { timeout: 240_000 }, async () => {
    const outcomes: Outcome[] = [];
    let loading = true;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (loading) outcomes.push(await healthz());
    });
    try {
      const counted = [await requestsCounted()];
      for (let kill = 0; kill < KILLS; kill++) {
        const before = workerPids();
        expect(before).toHaveLength(2);
        process.kill(before[0] as number, 'SIGKILL');
        // Replaced: two workers again, the killed one gone.
        for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
          const now = workerPids();
          if (now.length === 2 && !now.includes(before[0] as number)) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        // Its replacement has answered some requests before the next kill.
        const answered = outcomes.length;
        while (outcomes.length < answered + 20) await new Promise((resolve) => setTimeout(resolve, 50));
        counted.push(await requestsCounted());
      }
      for (let i = 1; i < counted.length; i++) expect(counted[i]).toBeGreaterThanOrEqual(counted[i - 1] as number);
    } finally {
      loading = false;
      await Promise.all(clients);
    }
    expect(outcomes.filter((outcome) => outcome === 'hung')).toEqual([]);
    expect(outcomes.filter((outcome) => outcome === 'answered').length).toBeGreaterThan(CLIENTS * KILLS);
  });
});
