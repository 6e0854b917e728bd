// The service as a process under hostile connections and through a shutdown: silent and slow connections
// are closed at their limits while other clients are served, and SIGTERM drains keep-alive clients without
// cutting a request, exiting 0; only a request still running when the grace period ends is cut, and logged.
// Before the drain, SIGTERM's delay keeps the service accepting while /readyz says 503 (a balancer's checks
// notice it), when health checks have been asking /readyz; without them, and on Ctrl-C (SIGINT), the drain
// starts at once (a SIGINT also ends a delay under way).
import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, startListening, stopAll } from './process.js';

const SLOW = { timeout: 120_000 };
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await stopAll();
});
const databases: TestDatabase[] = [];
afterAll(() => Promise.all(databases.map((d) => d.drop())));

async function start(env: Record<string, string>): Promise<{ server: Running; url: string; key: string }> {
  const database = await freshDatabase();
  databases.push(database);
  const { server, url } = await startListening({ DATABASE_URL: database.url, LOG_LEVEL: 'info', ...env }, 60_000);
  return { server, url, key: server.firstKey() as string };
}

function open(url: string, first?: string, drip?: string): Promise<Socket> {
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

const closed = (socket: Socket) => socket.destroyed || socket.closed;

describe('bounded connections', SLOW, () => {
  it('closes 4,800 silent and 200 slow connections at their limits while serving other clients', async () => {
    const { url, key } = await start({
      HEADERS_TIMEOUT_S: '1',
      REQUEST_TIMEOUT_S: '2',
      IDLE_TIMEOUT_S: '1',
      LOG_LEVEL: 'warn',
    });
    const held: Socket[] = [];
    // 5,000 held in all, as the hostile client holds them (loopback only; the fd limit here is 20,000).
    for (let i = 0; i < 4800; i++) held.push(await open(url));
    for (let i = 0; i < 100; i++) {
      held.push(await open(url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n', 'X-Slow: 1\r\n'));
      held.push(
        await open(
          url,
          'POST /api/v1/spaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n',
          'a',
        ),
      );
    }
    const opened = Date.now();

    // Meanwhile, another client is answered as usual (bounded generously: the machine may be busy).
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const response = await fetch(`${url}/api/v1/spaces`, {
        headers: { Authorization: `Bearer ${key}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect(response.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(10_000);
    }

    // Every held connection is closed by the server: idle 1 s, headers 1 s, request 2 s, plus generous slack.
    await expect
      .poll(() => held.filter((socket) => !closed(socket)).length, {
        timeout: Math.max(1_000, opened + 30_000 - Date.now()),
        interval: 200,
      })
      .toBe(0);
    const response = await fetch(`${url}/healthz`);
    expect(response.status).toBe(200);
  });
});

interface LoopStats {
  complete: number;
  /** Every answer: when its request was sent, and whether it said Connection: close. */
  answers: Array<{ sentAt: number; close: boolean }>;
  failures: string[];
}

/** A client looping GET over one keep-alive connection until the server refuses it a new one. */
async function keepAliveLoop(url: string, key: string, signalled: () => number | undefined, stats: LoopStats) {
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

describe('draining shutdown', SLOW, () => {
  it('answers 8 keep-alive clients completely through SIGTERM and exits 0', async () => {
    const { server, url, key } = await start({ SHUTDOWN_GRACE_S: '20' });
    let signalledAt: number | undefined;
    const stats: LoopStats = { complete: 0, answers: [], failures: [] };
    const loops = Array.from({ length: 8 }, () => keepAliveLoop(url, key, () => signalledAt, stats));
    await expect.poll(() => stats.complete, { timeout: 60_000 }).toBeGreaterThanOrEqual(200);

    signalledAt = Date.now();
    const exit = await server.stop('SIGTERM', 30_000);
    const exitedAfter = Date.now() - signalledAt;
    await Promise.all(loops);

    expect(stats.failures).toEqual([]);
    expect(exit.code).toBe(0);
    // Well within the grace period: the service stops as soon as the last request is answered.
    expect(exitedAfter).toBeLessThan(15_000);
    const log = exit.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg?: string; time?: string; requests_cut?: number });
    // From the moment the service logged "draining" (it does so once it drains), every request sent is
    // answered with Connection: close. The test's own clock at kill() would race the signal's delivery.
    const drainingAt = Date.parse(log.find((entry) => entry.msg === 'draining')?.time ?? '');
    expect(drainingAt).toBeGreaterThan(0);
    expect(stats.answers.filter((a) => a.sentAt > drainingAt && !a.close)).toEqual([]);
    expect(log.find((entry) => entry.msg === 'drained')?.requests_cut).toBe(0);
  });

  it('closes an idle keep-alive connection and exits 0 at once', async () => {
    const { server, url } = await start({ SHUTDOWN_GRACE_S: '20' });
    const socket = await open(url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => socket.once('data', resolve));
    const signalledAt = Date.now();
    const exit = await server.stop('SIGTERM', 30_000);
    expect(exit.code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    await new Promise((resolve) => (closed(socket) ? resolve(null) : socket.once('close', resolve)));
  });

  it('cuts only a request still running when the grace period ends, logs which, and exits 1', async () => {
    const { server, url, key } = await start({
      SHUTDOWN_GRACE_S: '1',
      REQUEST_TIMEOUT_S: '60',
      HEADERS_TIMEOUT_S: '60',
    });
    // A body that never arrives in full keeps its request running. Its headers ask for 100 Continue: once that
    // comes, the server has taken the request (Node answers it as it hands the request over), and the body starts.
    const socket = await open(
      url,
      `POST /api/v1/spaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nX-Request-Id: slow-upload-1\r\n` +
        'Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n',
    );
    await new Promise<void>((resolve) => {
      let answer = '';
      const read = (chunk: Buffer) => {
        answer += chunk.toString('latin1');
        if (!answer.startsWith('HTTP/1.1 100 Continue\r\n')) return;
        socket.off('data', read);
        resolve();
      };
      socket.on('data', read);
    });
    socket.write('name=');
    const exit = await server.stop('SIGTERM', 30_000);
    expect(exit.code).toBe(1);
    const cut = exit.stdout.split('\n').find((line) => line.includes('request cut by shutdown'));
    expect(JSON.parse(cut ?? '{}')).toMatchObject({
      method: 'POST',
      path: '/api/v1/spaces',
      request_id: 'slow-upload-1',
    });
    expect(socket.destroyed || socket.readableEnded || closed(socket)).toBe(true);
  });
});

/** The service's JSON log lines. */
const logOf = (stdout: string) =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; time?: string; delay_s?: number; requests_cut?: number });
const loggedAt = (stdout: string, msg: string) => Date.parse(logOf(stdout).find((e) => e.msg === msg)?.time ?? '');

type Answer = { status?: number; connection?: string; error?: string };

/** One request on a new connection: its status and Connection header, or the error's code. */
function fresh(url: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get(`${url}${path}`, { agent: false, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
}

describe('drain delay', SLOW, () => {
  it('keeps accepting and serving on SIGTERM while /readyz says 503 for DRAIN_DELAY_S, then drains and exits 0', async () => {
    const { server, url, key } = await start({ DRAIN_DELAY_S: '3', SHUTDOWN_GRACE_S: '20' });
    // A balancer's health checks: /readyz asked again and again.
    expect((await fresh(url, '/readyz')).status).toBe(200);
    expect((await fresh(url, '/readyz')).status).toBe(200);
    server.child.kill('SIGTERM');
    await server.waitForOutput(/"msg":"draining"/, 10_000);

    // New connections, as a balancer opens them until its checks mark the instance down: every one is served
    // (with Connection: close), and /readyz tells the balancer to stop. The loop ends at the batch that meets
    // the closing listener: refused, or reset when the kernel had queued the connection as the listener closed
    // (a balancer that has seen the 503 sends none by then).
    const during: Answer[] = [];
    const deadline = Date.now() + 60_000;
    let closedAt = 0;
    for (let closed = false; !closed && Date.now() < deadline; ) {
      const answers = await Promise.all([
        fresh(url, '/api/v1/spaces', { Authorization: `Bearer ${key}` }),
        fresh(url, '/readyz'),
        fresh(url, '/healthz'),
      ]);
      closed = answers.some((answer) => answer.error === 'ECONNREFUSED' || answer.error === 'ECONNRESET');
      if (closed) closedAt = Date.now();
      else during.push(...answers);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const exit = await server.exited;
    expect(exit.code).toBe(0);

    const drainingAt = loggedAt(exit.stdout, 'draining');
    const stoppedAcceptingAt = loggedAt(exit.stdout, 'stopped accepting');
    // A lower bound only (a busy machine makes it longer). Node counts a timer from the event loop's cached
    // time, which can be a few ms older than the clock read of the log line before it: 2,999 ms was seen.
    expect(stoppedAcceptingAt - drainingAt).toBeGreaterThanOrEqual(2900);
    // No connection was refused or reset before the listener closed.
    expect(closedAt).toBeGreaterThanOrEqual(stoppedAcceptingAt);
    expect(logOf(exit.stdout).find((e) => e.msg === 'draining')).toMatchObject({ delay_s: 3, readiness_checked: true });
    expect(during.length).toBeGreaterThanOrEqual(6);
    expect(during.filter((answer) => answer.error)).toEqual([]);
    const statuses = new Set(during.map((answer) => answer.status));
    expect([...statuses].sort()).toEqual([200, 503]);
    expect(during.filter((answer) => answer.connection !== 'close')).toEqual([]);
    expect(logOf(exit.stdout).find((e) => e.msg === 'drained')?.requests_cut).toBe(0);
  });

  it('drains at once on SIGINT (Ctrl-C), whatever DRAIN_DELAY_S says', async () => {
    const { server } = await start({ DRAIN_DELAY_S: '60' });
    const signalledAt = Date.now();
    const exit = await server.stop('SIGINT', 30_000);
    expect(exit.code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(20_000);
    expect(logOf(exit.stdout).find((e) => e.msg === 'draining')?.delay_s).toBe(0);
  });

  it('drains at once on SIGTERM when nothing checks /readyz (docker stop, a shell, a script that asked once)', async () => {
    const { server, url } = await start({ DRAIN_DELAY_S: '60' });
    expect((await fresh(url, '/readyz')).status).toBe(200);
    const signalledAt = Date.now();
    const exit = await server.stop('SIGTERM', 30_000);
    expect(exit.code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(20_000);
    expect(logOf(exit.stdout).find((e) => e.msg === 'draining')).toMatchObject({
      delay_s: 0,
      readiness_checked: false,
    });
  });

  it('ends the delay of a SIGTERM at a SIGINT, and ignores a second SIGTERM', async () => {
    const { server, url } = await start({ DRAIN_DELAY_S: '60' });
    for (let probe = 0; probe < 2; probe++) expect((await fresh(url, '/readyz')).status).toBe(200);
    server.child.kill('SIGTERM');
    await server.waitForOutput(/"msg":"draining"/, 10_000);
    server.child.kill('SIGTERM');
    await server.waitForOutput(/"msg":"already draining"/, 10_000);
    const signalledAt = Date.now();
    const exit = await server.stop('SIGINT', 30_000);
    expect(exit.code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(20_000);
    expect(logOf(exit.stdout).map((e) => e.msg)).toEqual(
      expect.arrayContaining(['draining', 'already draining', 'drain delay cut short', 'stopped accepting', 'drained']),
    );
  });
});
