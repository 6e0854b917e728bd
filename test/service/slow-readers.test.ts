// Clients that never read their answers, against the service as npm start runs it at a 1,024 file-descriptor
// limit (ulimit -n): 1,100 connections each send GET /docs (4.4 MB, more than the kernel's buffers take) and
// read nothing. Other clients are answered throughout, and every one of those connections is closed by the
// service within SEND_TIMEOUT_S of its last progress, or earlier to make room for a new client (MAX_CONNECTIONS).
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, runScript, SERVICE, stopAll } from './process.js';

const SEND_TIMEOUT_S = 3;
const OPEN_FILES = 1024;
const STALLED = 1100;
/**
 * How long a probe may wait: each never-reading connection costs the service a few ms of kernel time (TCP takes
 * up to 4 MB of its answer into buffers), so on a busy shared machine the first probes wait seconds. Before the
 * fix they were refused (connection reset) at the descriptor limit, which no wait mends.
 */
const PROBE_TIMEOUT_MS = 60_000;

let database: TestDatabase;
let service: Running;
let origin: string;
let port: number;
let docsBytes: number;

beforeAll(async () => {
  database = await freshDatabase('sqlite');
  port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  service = runScript(
    SERVICE,
    [],
    {
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: database.url,
      SEND_TIMEOUT_S: String(SEND_TIMEOUT_S),
      LOG_LEVEL: 'warn',
      // The 4.4 MB page: built when missing or stale, once the service listens.
      DSS_BUILD_DOCS: '1',
    },
    { openFiles: OPEN_FILES },
  );
  for (const deadline = Date.now() + 120_000; ; ) {
    const response = await fetch(`${origin}/docs`, { headers: { 'Accept-Encoding': 'identity' } }).catch(
      () => undefined,
    );
    if (response?.status === 200) {
      docsBytes = (await response.arrayBuffer()).byteLength;
      break;
    }
    await response?.arrayBuffer();
    if (Date.now() > deadline || service.child.exitCode !== null) {
      throw new Error(`the docs page was not served:\n${service.stdout()}\n${service.stderr()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 150_000);
afterAll(async () => {
  await stopAll();
  await database?.drop();
});

interface Stalled {
  socket: Socket;
  received: number;
  closed: Promise<void>;
}

/** A connection that asks for the docs page uncompressed and reads nothing of the answer until resumed. */
function stalledReader(): Stalled {
  const socket = connect(port, '127.0.0.1');
  const reader: Stalled = {
    socket,
    received: 0,
    closed: new Promise((resolve) => socket.once('close', () => resolve())),
  };
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    reader.received += chunk.length;
  });
  // Node stops reading from the kernel once its own small buffer is full: the rest stays in TCP's windows.
  socket.pause();
  socket.write('GET /docs HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: identity\r\n\r\n');
  return reader;
}

/** The service's established connections on its port, from the kernel's table (/proc/net/tcp). */
function establishedAtService(): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const [, address, , state] = line.trim().split(/\s+/);
      return address === local && state === '01';
    }).length;
}

/**
 * GET /healthz on a connection of its own, as a new client: at MAX_CONNECTIONS the service closes an idle kept-alive
 * connection to make room, which is what the previous probe's would be, and a request sent on it meets "other side
 * closed" (fetch reuses its connections).
 */
function healthz(): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = get(`${origin}/healthz`, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
      response.on('error', reject);
    });
    request.setTimeout(PROBE_TIMEOUT_MS, () => request.destroy(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)));
    request.on('error', reject);
  });
}

describe(`${STALLED} connections that never read, at ulimit -n ${OPEN_FILES}`, () => {
  it('answers other clients throughout, and closes every one of them', { timeout: 300_000 }, async () => {
    expect(docsBytes).toBeGreaterThan(4_000_000);
    const readers: Stalled[] = [];
    try {
      const probes: number[] = [];
      for (let i = 0; i < STALLED; i++) {
        readers.push(stalledReader());
        // A probe among the arrivals too, when the service is at its connection limit.
        if (i % 275 === 274) probes.push(await healthz());
      }
      const started = Date.now();
      // Probes while they are all held, up to past SEND_TIMEOUT_S.
      while (Date.now() - started < (SEND_TIMEOUT_S + 1) * 1000) {
        probes.push(await healthz());
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(probes.length).toBeGreaterThan(4);
      expect(probes.every((status) => status === 200)).toBe(true);
      // Every one is closed by the service: its answer made no progress for SEND_TIMEOUT_S, or it made room.
      let held = establishedAtService();
      for (const deadline = Date.now() + 90_000; held > 0 && Date.now() < deadline; held = establishedAtService()) {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(held).toBe(0);
      // Read now, each ends short of the page: none was served in full, so each was cut, not answered.
      for (const reader of readers) reader.socket.resume();
      await Promise.all(readers.map((reader) => reader.closed));
      expect(readers.filter((reader) => reader.received >= docsBytes)).toEqual([]);
      expect(await healthz()).toBe(200);
    } finally {
      for (const reader of readers) reader.socket.destroy();
    }
  });
});
