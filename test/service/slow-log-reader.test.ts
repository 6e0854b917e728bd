// A log reader that stops reading (a stalled collector, a terminal scrolled back, `| less`): the service as npm
// start runs it, its stdout a pipe the test stops reading. Requests are answered meanwhile, another client's
// /healthz too; the lines that do not fit LOG_BUFFER_BYTES are dropped, counted in log_lines_dropped_total and
// reported in a warning once the reader reads again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, runScript, SERVICE, stopAll } from './process.js';

const REQUESTS = 600;
/** A stalled service never answers: a bound far above any honest answer on a busy machine. */
const ANSWER_TIMEOUT_MS = 20_000;
/** Each request line is a few kilobytes of log: the pipe (64 KB) and the buffer fill within a few dozen. */
const PADDING = 'p'.repeat(2000);

let database: TestDatabase;
let service: Running;
let origin: string;
let metricsPort: number;

beforeAll(async () => {
  database = await freshDatabase('sqlite');
  const port = await freePort();
  metricsPort = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = runScript(SERVICE, [], {
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: database.url,
    LOG_LEVEL: 'info',
    LOG_BUFFER_BYTES: '65536',
    METRICS_PORT: String(metricsPort),
  });
  await service.waitForOutput(/"msg":"listening"/, 60_000);
}, 90_000);
afterAll(async () => {
  await stopAll();
  await database?.drop();
});

const get = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS) });
  return { status: response.status, body: await response.text() };
};

describe('stdout piped to a reader that stops reading', () => {
  it('answers every request meanwhile, and drops, counts and reports what the log cannot hold', {
    timeout: 120_000,
  }, async () => {
    service.child.stdout?.pause();
    const statuses: number[] = [];
    for (let i = 0; i < REQUESTS; i += 20) {
      // A 404 is logged at info (a passing health check only at debug).
      const batch = Array.from({ length: 20 }, () => get(`${origin}/no-such-page`, { 'X-Padding': PADDING }));
      statuses.push(...(await Promise.all(batch)).map((answer) => answer.status));
    }
    expect(statuses.filter((status) => status !== 404)).toEqual([]);
    // Another client, while the log is still stalled.
    expect((await get(`${origin}/healthz`)).status).toBe(200);
    const metrics = (await get(`http://127.0.0.1:${metricsPort}/metrics`)).body;
    const dropped = Number(/^log_lines_dropped_total (\d+)$/m.exec(metrics)?.[1]);
    expect(dropped).toBeGreaterThan(0);
    service.child.stdout?.resume();
    await service.waitForOutput(/"msg":"log lines dropped/, 30_000);
    const warning = service
      .stdout()
      .split('\n')
      .find((line) => line.includes('"msg":"log lines dropped'));
    expect(JSON.parse(warning as string)).toMatchObject({ level: 'warn', buffer_bytes: 65_536 });
    expect(JSON.parse(warning as string).dropped_total).toBeGreaterThan(0);
  });
});
