// SIGTERM's drain delay, with the service as a process: before the drain it keeps accepting while /readyz says
// 503 (a balancer's checks notice it), when health checks have been asking /readyz; without them, and on Ctrl-C
// (SIGINT), the drain starts at once (a SIGINT also ends a delay under way). The drain itself is lifecycle.test.ts.
import { describe, expect, it } from 'vitest';
import { type Answer, cleanUpAfterEach, fresh, loggedAt, logOf, SLOW, start } from './lifecycle-support.js';

cleanUpAfterEach();

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
