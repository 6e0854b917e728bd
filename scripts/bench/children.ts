// The benchmark's child processes: each one spawned directly (so the PID held is the process itself), tracked,
// and killed by PID at the end, on failure and on Ctrl-C.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

const children = new Set<ChildProcess>();

/** Spawns and tracks a process; its stdout is kept only with `captureStdout` (a server's request log is not). */
export function spawnChild(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  captureStdout = false,
  cwd?: string,
): ChildProcess {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    ...(cwd ? { cwd } : {}),
    stdio: ['ignore', captureStdout ? 'pipe' : 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  children.add(child);
  child.once('exit', (code, signal) => {
    children.delete(child);
    if (!stopping.has(child) && code !== 0 && !captureStdout)
      console.error(`${args.join(' ')} exited (${code ?? signal}):\n${stderr}`);
  });
  return child;
}

const stopping = new Set<ChildProcess>();

/** SIGTERM, then SIGKILL after 3 s; resolves once the process has gone. */
export function stopChild(child: ChildProcess): Promise<void> {
  stopping.add(child);
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return Promise.resolve();
  const pid = child.pid;
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    process.kill(pid, 'SIGTERM');
    setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
    }, 3000).unref();
  });
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

/** A port free on loopback right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers (with `status`, when given); returns the milliseconds since `since`. */
export async function waitForHttp(url: string, since: number, status?: number, timeoutMs = 60_000): Promise<number> {
  while (performance.now() - since < timeoutMs) {
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (status === undefined || response.status === status) return performance.now() - since;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

/** Resident memory of a process and its child processes (WORKERS > 1) in MB (Linux), or undefined. */
export async function rssMb(pid: number | undefined): Promise<number | undefined> {
  const kb = await rssKb(pid);
  return kb === undefined ? undefined : Math.round(kb / 1024);
}

async function rssKb(pid: number | undefined): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
    if (!Number.isFinite(kb)) return undefined;
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ');
    let total = kb;
    for (const child of children.filter(Boolean)) total += (await rssKb(Number(child))) ?? 0;
    return total;
  } catch {
    return undefined;
  }
}

/**
 * CPU time a process and its child processes (WORKERS > 1) have used so far in ms (Linux; user + system), or
 * undefined. Divided by the requests served, it is the cost per request whatever else the machine is busy with.
 */
export async function cpuMs(pid: number | undefined): Promise<number | undefined> {
  const { readFile } = await import('node:fs/promises');
  try {
    // Fields after the command name (which is in parentheses and may hold spaces): utime and stime are 14 and 15.
    const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
    const ticks = Number(stat[11]) + Number(stat[12]);
    if (!Number.isFinite(ticks)) return undefined;
    const children = (await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')).split(' ');
    let total = ticks * 10;
    for (const child of children.filter(Boolean)) total += (await cpuMs(Number(child))) ?? 0;
    return total;
  } catch {
    return undefined;
  }
}
