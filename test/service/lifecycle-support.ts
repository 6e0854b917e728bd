// What the lifecycle suites share (lifecycle.test.ts, drain-delay.test.ts): the service started as a process on
// a fresh database, raw connections, a keep-alive client looping until the drain refuses it, one-off requests on
// new connections, and the service's JSON log read back.
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, startListening, stopAll } from './process.js';

export const SLOW = { timeout: 120_000 };
const sockets: Socket[] = [];
const databases: TestDatabase[] = [];

/** Registers the file's cleanup: its sockets and processes after each test, its databases at the end. */
export function cleanUpAfterEach(): void {
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await stopAll();
  });
  afterAll(() => Promise.all(databases.map((d) => d.drop())));
}

export async function start(env: Record<string, string>): Promise<{ server: Running; url: string; key: string }> {
  const database = await freshDatabase();
  databases.push(database);
  const { server, url } = await startListening({ DATABASE_URL: database.url, LOG_LEVEL: 'info', ...env }, 60_000);
  return { server, url, key: server.firstKey() as string };
}

export function open(url: string, first?: string, drip?: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      if (first) socket.write(first);
      if (drip) {
        const timer = setInterval(() => socket.writable && socket.write(drip), 400);
        socket.once('close', () => clearInterval(timer));
      }
      resolve(socket);
    });
    sockets.push(socket);
    socket.on('error', () => {});
    // Reading keeps the socket flowing, so that the server's close is seen.
    socket.resume();
    socket.once('error', reject);
  });
}

export const closed = (socket: Socket) => socket.destroyed || socket.closed;

export interface LoopStats {
  complete: number;
  /** Every answer: when its request was sent, and whether it said Connection: close. */
  answers: Array<{ sentAt: number; close: boolean }>;
  failures: string[];
}

/** A client looping GET over one keep-alive connection until the server refuses it a new one. */
export async function keepAliveLoop(url: string, key: string, signalled: () => number | undefined, stats: LoopStats) {
  // `signalled` only tells a refused connection after SIGTERM (the end of the loop) from a failure.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (;;) {
      const sentAt = Date.now();
      const outcome = await new Promise<{
        error?: NodeJS.ErrnoException;
        reused?: boolean;
        res?: http.IncomingMessage;
        body?: string;
      }>((resolve) => {
        const req = http.get(`${url}/api/v1/spaces`, { agent, headers: { Authorization: `Bearer ${key}` } }, (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ res, body }));
          res.on('error', (error) => resolve({ error }));
        });
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error, reused: req.reusedSocket }));
      });
      if (outcome.error) {
        // The listener is closed: the request never reached the service, and that is how the loop ends.
        if (outcome.error.code === 'ECONNREFUSED' && signalled() !== undefined) return;
        stats.failures.push(`${outcome.error.code ?? outcome.error.message} (reused socket: ${outcome.reused})`);
        return;
      }
      const { res, body = '' } = outcome;
      if (res?.statusCode !== 200 || !res.complete)
        stats.failures.push(`status ${res?.statusCode}, complete ${res?.complete}`);
      JSON.parse(body);
      stats.complete++;
      stats.answers.push({ sentAt, close: res?.headers.connection === 'close' });
    }
  } finally {
    agent.destroy();
  }
}

export const logOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; time?: string; delay_s?: number; requests_cut?: number });
export const loggedAt = (stdout: string, msg: string) =>
  Date.parse(logOf(stdout).find((e) => e.msg === msg)?.time ?? '');

export type Answer = { status?: number; connection?: string; error?: string };

/** One request on a new connection: its status and Connection header, or the error's code. */
export function fresh(url: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get(`${url}${path}`, { agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
}
