// `npm run bench`: what the service's request pipeline (routing, key check, body reading, validation,
// repository, SQLite) costs per request, measured side by side with a bare Express app that answers the same
// bodies from memory. Rounds alternate between the two so that machine noise falls on both alike; the report
// gives each one's throughput and latency and the ratio between them. Loopback only, bounded in count.

import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { issueKey } from '../server/accounts/keys.js';
import { createApp } from '../server/app.js';
import { openDatabase } from '../server/db/database.js';
import { migrateToLatest } from '../server/db/migrations.js';

const ROUNDS = 5;
const REQUESTS_PER_ROUND = 1000;
const CONCURRENCY = 8;

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: () => string;
}

async function listen(app: express.Express): Promise<{ origin: string; close: () => Promise<void> }> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Sends `count` requests, `CONCURRENCY` at a time; returns each one's latency in milliseconds. */
async function load(origin: string, key: string, scenario: Scenario, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let sent = 0;
  const worker = async () => {
    while (sent < count) {
      sent++;
      const started = performance.now();
      const response = await fetch(`${origin}${scenario.path}`, {
        method: scenario.method,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(scenario.body ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
        },
        body: scenario.body?.(),
      });
      await response.arrayBuffer();
      if (response.status >= 300) throw new Error(`${scenario.name}: ${response.status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-'));
  const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
  await migrateToLatest(db);
  const { key } = await issueKey(db, 'bench');
  const service = await listen(await createApp({ db }));

  // Seed records, then take the service's own answers as the baseline's fixed replies.
  for (let i = 0; i < 100; i++) {
    await fetch(`${service.origin}/api/v1/spaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `name=Space+${i}&color=${(i % 6) + 1}`,
    });
  }
  let counter = 0;
  const scenarios: Scenario[] = [
    { name: 'list spaces (page of 10)', method: 'GET', path: '/api/v1/spaces' },
    { name: 'search spaces', method: 'GET', path: '/api/v1/spaces?search=ace+4&sort_by=name&per_page=25' },
    { name: 'show a space', method: 'GET', path: '/api/v1/spaces/42' },
    {
      name: 'store a space (form)',
      method: 'POST',
      path: '/api/v1/spaces',
      body: () => `name=Bench+${++counter}&color=3`,
    },
  ];
  const replies = new Map<string, { status: number; body: string }>();
  for (const s of scenarios) {
    const response = await fetch(`${service.origin}${s.path}`, {
      method: s.method,
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: s.body?.(),
    });
    replies.set(`${s.method} ${s.path}`, { status: response.status, body: await response.text() });
  }
  const bare = express();
  bare.use(express.urlencoded({ extended: false }));
  bare.use((req, res) => {
    const reply = replies.get(`${req.method} ${req.originalUrl}`);
    res
      .status(reply?.status ?? 404)
      .type('application/json')
      .send(reply?.body ?? '{}');
  });
  const baseline = await listen(bare);

  console.log(
    `node ${process.version}; ${ROUNDS} alternating rounds of ${REQUESTS_PER_ROUND} requests, ${CONCURRENCY} at a time, per scenario and app\n`,
  );
  console.log(
    'scenario                   | baseline req/s  p50 ms  p99 ms | service req/s  p50 ms  p99 ms | service/baseline time',
  );
  console.log(
    '---------------------------|--------------------------------|-------------------------------|----------------------',
  );
  for (const scenario of scenarios) {
    const times = { baseline: 0, service: 0 };
    const latencies: { baseline: number[]; service: number[] } = { baseline: [], service: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [which, target] of [
        ['baseline', baseline],
        ['service', service],
      ] as const) {
        const started = performance.now();
        latencies[which].push(...(await load(target.origin, key, scenario, REQUESTS_PER_ROUND)));
        times[which] += performance.now() - started;
      }
    }
    const row = (which: 'baseline' | 'service') => {
      const sorted = [...latencies[which]].sort((a, b) => a - b);
      const perSecond = (ROUNDS * REQUESTS_PER_ROUND) / (times[which] / 1000);
      return `${perSecond.toFixed(0).padStart(13)} ${percentile(sorted, 0.5).toFixed(2).padStart(7)} ${percentile(sorted, 0.99).toFixed(2).padStart(7)}`;
    };
    console.log(
      `${scenario.name.padEnd(27)}|${row('baseline')}  |${row('service')} | ${(times.service / times.baseline).toFixed(2)}x`,
    );
  }

  await Promise.all([service.close(), baseline.close()]);
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
}

await main();
