// A collector that takes connections and never answers (the worst of down, slow and refusing): every request is
// still answered, the spans that cannot be sent are dropped from a bounded queue and counted in
// tracing_spans_dropped_total, and the log warns of it. And without any OTEL_ variable, the service's bundle
// reads no OpenTelemetry package: the tracing port loads the API only when the SDK was started before it.
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { openDatabase } from '../../server/db/database.js';
import { ROOT, type Running, runScript, SERVICE, stopAll } from '../service/process.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

let database: TestDatabase;
let server: Running;
let api: string;
let metricsUrl: string;
let key: string;
const held = new Set<Socket>();
const silent = createServer((socket) => {
  held.add(socket);
  socket.on('close', () => held.delete(socket));
});

beforeAll(async () => {
  database = await freshDatabase('sqlite');
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const { port } = silent.address() as { port: number };
  server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_BSP_MAX_QUEUE_SIZE: '16',
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '8',
  });
  const [, origin, metricsAt] = await server.waitForOutput(
    /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/,
    110_000,
  );
  api = `${origin}/api/v1`;
  metricsUrl = metricsAt as string;
  const db = openDatabase(database.url);
  key = (await issueKey(db, 'dead-collector')).key;
  await db.destroy();
}, 150_000);

afterAll(async () => {
  await stopAll();
  for (const socket of held) socket.destroy();
  silent.close();
  await database?.drop();
});

const droppedOf = (text: string) => Number(/^tracing_spans_dropped_total (\d+)/m.exec(text)?.[1] ?? 0);

describe('a collector that never answers', () => {
  it('costs no request: each is answered, and the spans that could not be sent are dropped and counted', async () => {
    for (let i = 0; i < 40; i++) {
      const response = await fetch(`${api}/spaces`, {
        headers: { Authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect(response.status).toBe(200);
    }
    const deadline = Date.now() + 30_000;
    let dropped = 0;
    while (dropped === 0 && Date.now() < deadline) {
      dropped = droppedOf(await (await fetch(metricsUrl)).text());
      if (dropped === 0) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(dropped).toBeGreaterThan(0);
  }, 90_000);

  it('is told in the log, once, as a warning with the count', async () => {
    const [line] = await server.waitForOutput(/\{[^\n]*"msg":"spans dropped[^\n]*\n/, 30_000);
    expect(JSON.parse(line)).toMatchObject({ level: 'warn', dropped_total: expect.any(Number) });
    expect(server.stdout().match(/"msg":"spans dropped/g)).toHaveLength(1);
  }, 40_000);
});

describe('no OTEL_ variable', () => {
  it('loads no OpenTelemetry package: the bundle imports none, and start.mjs reads tracing only when asked', () => {
    const bundle = readFileSync(`${ROOT}.build/server.mjs`, 'utf8');
    expect(bundle).not.toMatch(/^import [^;]*["']@opentelemetry\//m);
    const start = readFileSync(`${ROOT}scripts/start.mjs`, 'utf8');
    expect(start).toContain("if (tracingConfigured(process.env)) await import('./tracing.mjs');");
    expect(readFileSync(`${ROOT}scripts/tracing-configured.mjs`, 'utf8')).not.toMatch(/\bimport\b/);
  });
});
