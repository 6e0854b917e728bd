// What the chaos tests share: the service as `npm start` runs it, a few clients sending requests in a loop and
// keeping what was acknowledged, and another process holding SQLite's write lock. Everything they start is
// stopped by its PID (test/service/process.ts's stopAll, the locker's own stop), also when a test fails.
import { spawn } from 'node:child_process';
import { SQLITE_DRIVER } from '../../server/db/sqlite-driver.js';
import { ROOT, type Running, runScript, SERVICE } from '../service/process.js';

export interface Service {
  server: Running;
  origin: string;
  key: string;
}

/** The service on port 0, rate limits off (the clients below send more than a quota allows). */
export async function startService(env: Record<string, string>): Promise<Service> {
  const server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    RATE_LIMIT: 'off',
    AUTH_FAILURE_LIMIT: 'off',
    ...env,
  });
  // Generous: on a loaded machine a start can take half a minute (three processes with WORKERS=2).
  const [, origin] = await server.waitForOutput(
    /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*curl [^\n]*\n/,
    120_000,
  );
  const key = server.firstKey();
  if (!origin || !key) throw new Error(`no URL or key:\n${server.stdout()}\n${server.stderr()}`);
  return { server, origin, key };
}

export interface Answer {
  status: number;
  /** The problem's type for an error, or the network error's code (status 0). */
  type?: string;
  retryAfter: string | null;
  ms: number;
}

/** One request with a time limit; a network error is status 0, never a throw. */
export async function send(
  url: string,
  init: RequestInit & { timeoutMs?: number } = {},
): Promise<Answer & { body: unknown }> {
  const started = performance.now();
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 30_000) });
    const text = await response.text();
    const body = text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text;
    return {
      status: response.status,
      type: response.status >= 400 ? (body as { type?: string }).type : undefined,
      retryAfter: response.headers.get('retry-after'),
      ms: performance.now() - started,
      body,
    };
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    return { status: 0, type: code, retryAfter: null, ms: performance.now() - started, body: undefined };
  }
}

/** Sends `request` until it gets `status` (100 ms apart); resolves with that answer, or fails past `withinMs`. */
export async function servedAgain(request: () => ReturnType<typeof send>, status: number, withinMs: number) {
  const started = Date.now();
  for (;;) {
    const answer = await request();
    if (answer.status === status) return answer;
    if (Date.now() - started > withinMs) throw new Error(`still ${answer.status} ${answer.type} after ${withinMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export const form = (key: string) => ({
  Authorization: `Bearer ${key}`,
  'Content-Type': 'application/x-www-form-urlencoded',
});

export interface Load {
  /** Every answer, in the order they came. */
  answers: (Answer & { at: number; method: string })[];
  /** Ids of the spaces whose create was answered 201. */
  acknowledged: number[];
  stop(): Promise<void>;
}

/** `clients` loops, each creating a space and listing spaces in turn, until stopped. */
export function load(service: Service, clients: number): Load {
  const answers: Load['answers'] = [];
  const acknowledged: number[] = [];
  let stopping = false;
  const loop = async (client: number) => {
    for (let n = 0; !stopping; n++) {
      const write = n % 2 === 0;
      const answer = write
        ? await send(`${service.origin}/api/v1/spaces`, {
            method: 'POST',
            headers: form(service.key),
            body: `name=client-${client}-${n}`,
            timeoutMs: 15_000,
          })
        : await send(`${service.origin}/api/v1/spaces?per_page=10`, {
            headers: { Authorization: `Bearer ${service.key}` },
            timeoutMs: 15_000,
          });
      answers.push({ ...answer, at: Date.now(), method: write ? 'POST' : 'GET' });
      if (answer.status === 201) acknowledged.push((answer.body as { data: { id: number } }).data.id);
      // A refused connection would otherwise spin.
      if (answer.status === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const loops = Array.from({ length: clients }, (_, client) => loop(client));
  return {
    answers,
    acknowledged,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((sorted.length * p) / 100) - 1)] ?? Number.NaN;
}

export interface Locker {
  /** Resolves when the lock is released and the process has ended. */
  exited: Promise<number | null>;
  stop(): void;
}

/**
 * Another process (as an operator's sqlite3 shell, a backup or the keys command would be) holding SQLite's write
 * lock for `holdMs`: BEGIN IMMEDIATE and a write, then ROLLBACK. Resolves once the lock is held.
 */
export async function holdSqliteWriteLock(path: string, holdMs: number): Promise<Locker> {
  const script = `
    const Database = require(${JSON.stringify(SQLITE_DRIVER)});
    const db = new Database(process.argv[1]);
    db.exec('begin immediate');
    db.prepare("update accounts set name = name where id = -1").run();
    console.log('locked');
    setTimeout(() => { db.exec('rollback'); db.close(); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', script, path, String(holdMs)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.once('data', () => resolve());
    exited.then((code) => reject(new Error(`the locker ended (code ${code}) before taking the lock`)));
  });
  return {
    exited,
    stop: () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

/**
 * Skips a storage-fault test that cannot run here (no root, no loop device, no ext4 error hook), saying why; under
 * CI=true it fails instead: CI's machine has all of them, and a suite that quietly skipped would pass too early.
 */
export function needs(context: { skip(note?: string): void }, present: unknown, what: string): void {
  if (present) return;
  if (process.env.CI === 'true') throw new Error(`cannot run under CI=true: ${what}`);
  context.skip(what);
}
