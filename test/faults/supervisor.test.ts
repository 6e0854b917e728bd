// What a supervisor (docker stop, systemd, any process manager) does to the command it started: SIGTERM or
// SIGINT to `npm start` ends the service exactly as it ends node itself: it drains, npm exits with node's exit
// code, and no process of the service is left running. (npm runs a script through sh -c, whose dash died on the
// forwarded signal and left node orphaned; the scripts exec node.)
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../service/process.js';
import { send } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'dss-supervisor-'));
const started: number[] = [];

afterAll(() => {
  // Whatever a failed test left running, by PID.
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Npm {
  child: ChildProcess;
  origin: string;
  /** The first start's key, from FIRST_KEY_FILE (none in the sandbox, which takes any key). */
  key(): string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let runs = 0;

/** `npm <args>` as a supervisor starts it, once the service it runs listens. */
async function npm(args: string[], env: Record<string, string> = {}): Promise<Npm> {
  const run = ++runs;
  const child = spawn('npm', [...args, '--silent'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DSS_BUILD_DOCS: '0',
      DATABASE_URL: `sqlite:${join(dir, `${run}.sqlite`)}`,
      FIRST_KEY_FILE: join(dir, `${run}.key`),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child.pid as number);
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 90 s:\n${output}`)), 90_000);
    const check = () => {
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*curl /.exec(output)?.[1];
      if (!found) return;
      clearTimeout(timer);
      resolve(found);
    };
    child.stdout?.on('data', check);
    child.stderr?.on('data', check);
    exited.then(() => reject(new Error(`npm ended before the service listened:\n${output}`)));
  });
  // Every process under npm (the shell, if any, and node), to check that none outlives it.
  for (const pid of descendants(child.pid as number)) started.push(pid);
  const key = () => readFileSync(join(dir, `${run}.key`), 'utf8').trim();
  return { child, origin, key, output: () => output, exited };
}

function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const children = table.filter(([, parent]) => parent === pid).map(([child]) => child);
  return children.flatMap((child) => [child, ...descendants(child)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/**
 * A request the service has received and not answered: its headers ask for "100 Continue", whose arrival says
 * the service took the request; its body never comes.
 */
async function requestInFlight(origin: string, key: string): Promise<Socket> {
  const { hostname, port } = new URL(origin);
  const socket = connect(Number(port), hostname);
  socket.on('error', () => {});
  socket.write(
    `POST /api/v1/spaces HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${key}\r\n` +
      'Content-Type: application/x-www-form-urlencoded\r\n' +
      'Content-Length: 10\r\nExpect: 100-continue\r\n\r\n',
  );
  await new Promise<void>((resolve, reject) => {
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk;
      if (received.includes('100 Continue')) resolve();
    });
    socket.once('close', () => reject(new Error(`closed before 100 Continue: ${received}`)));
  });
  return socket;
}

/** Waits for npm to end (bounded); the service's processes must be gone with it. */
async function ended(run: Npm, processes: number[]) {
  const exit = await Promise.race([
    run.exited,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('npm did not exit within 20 s')), 20_000)),
  ]);
  await expect.poll(() => processes.filter(alive), { timeout: 5_000 }).toEqual([]);
  expect((await send(`${run.origin}/healthz`, { timeoutMs: 2_000 })).status).toBe(0);
  return exit;
}

describe('a supervisor stopping `npm start`', { timeout: 150_000 }, () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the service drains, npm exits 0, nothing is left running',
    async (signal) => {
      const run = await npm(['start']);
      const processes = descendants(run.child.pid as number);
      expect(processes.length).toBeGreaterThan(0);
      run.child.kill(signal);
      const exit = await ended(run, processes);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(run.output()).toContain('"msg":"drained"');
      expect(run.output()).toContain('"exit_code":0,"msg":"stopped"');
      // The default DRAIN_DELAY_S waits for a balancer's health checks; none asked /readyz here, so no wait.
      expect(run.output()).toContain('"delay_s":0,"readiness_checked":false');
    },
  );

  it("propagates the service's exit code: 1 when the drain had to cut a request", async () => {
    const run = await npm(['start'], { SHUTDOWN_GRACE_S: '0.5' });
    const processes = descendants(run.child.pid as number);
    const inFlight = await requestInFlight(run.origin, run.key());
    run.child.kill('SIGTERM');
    const exit = await ended(run, processes);
    inFlight.destroy();
    expect(exit).toEqual({ code: 1, signal: null });
    expect(run.output()).toContain('request cut by shutdown');
  });

  it('`npm run sandbox` ends on SIGTERM too', async () => {
    const run = await npm(['run', 'sandbox']);
    const processes = descendants(run.child.pid as number);
    run.child.kill('SIGTERM');
    expect(await ended(run, processes)).toEqual({ code: 0, signal: null });
  });
});
