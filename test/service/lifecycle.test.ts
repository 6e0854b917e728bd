// The service as a process under hostile connections and through a shutdown: silent and slow connections
// are closed at their limits while other clients are served, and SIGTERM drains keep-alive clients without
// cutting a request, exiting 0; only a request still running when the grace period ends is cut, and logged.
// SIGTERM's drain delay is drain-delay.test.ts (a file of its own, so that CI's workers run the two at once).
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { cleanUpAfterEach, closed, keepAliveLoop, type LoopStats, open, SLOW, start } from './lifecycle-support.js';

cleanUpAfterEach();

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
