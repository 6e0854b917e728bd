// Webhook delivery throughput and latency on this machine: the app and its delivery worker in this process on a
// fresh SQLite file (or DATABASE_URL), a receiver on 127.0.0.1, N space creates sent as fast as they are answered;
// latency is from a create's answer to its event's arrival at the receiver. `npm run bench:webhooks -- --events 500`

import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { issueKey } from '../../server/accounts/keys.js';
import { createApp } from '../../server/app.js';
import { openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { createLogger } from '../../server/logger.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { startDeliveryWorker } from '../../server/webhooks/worker.js';

const { values } = parseArgs({ options: { events: { type: 'string', default: '300' } } });
const EVENTS = Number(values.events);
const dir = mkdtempSync(join(tmpdir(), 'dss-bench-webhooks-'));
const db = openDatabase(process.env.DATABASE_URL ?? `sqlite:${join(dir, 'bench.sqlite')}`);
await migrateToLatest(db);
const settings = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true };
const app = await createApp({ db, webhooks: settings });
const server = app.listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const api = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
const worker = startDeliveryWorker(db, settings, { logger: createLogger('silent') });

const arrived = new Map<string, number>();
const receiver = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => {
    body += chunk;
  });
  req.on('end', () => {
    const { data } = JSON.parse(body) as { data: { object: { id: number } } };
    arrived.set(String(data.object.id), performance.now());
    res.end('ok');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const { key } = await issueKey(db, 'bench');
const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
await fetch(`${api}/webhook-endpoints`, {
  method: 'POST',
  headers,
  body: JSON.stringify({ url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, enabled_events: ['*'] }),
});

const answered = new Map<string, number>();
const started = performance.now();
for (let i = 0; i < EVENTS; i++) {
  const reply = (await (
    await fetch(`${api}/spaces`, { method: 'POST', headers, body: JSON.stringify({ name: `bench ${i}` }) })
  ).json()) as { data: { id: number } };
  answered.set(String(reply.data.id), performance.now());
}
const created = performance.now();
while (arrived.size < EVENTS) await new Promise((resolve) => setTimeout(resolve, 10));
const done = performance.now();
const latencies = [...answered].map(([id, at]) => (arrived.get(id) ?? at) - at).sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
console.log(
  `${EVENTS} creates in ${((created - started) / 1000).toFixed(2)} s; all ${EVENTS} deliveries done ${((done - started) / 1000).toFixed(2)} s after the first create ` +
    `(${(EVENTS / ((done - started) / 1000)).toFixed(0)} deliveries/s, concurrency ${settings.concurrency})`,
);
console.log(
  `latency from a create's answer to its delivery: p50 ${pct(50).toFixed(1)} ms, p90 ${pct(90).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${pct(100).toFixed(1)} ms`,
);
await worker.stop();
server.closeAllConnections();
server.close();
receiver.close();
await db.destroy();
rmSync(dir, { recursive: true, force: true });
