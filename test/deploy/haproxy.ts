// HAProxy (Debian's package) for the topology test: installed when missing (CI runs as root), started in the
// foreground on the recommended configuration with loopback addresses (scripts/deploy/haproxy-config.ts), its
// servers' states read from its stats page, stopped by PID.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { haproxyConfig, type LoopbackTopology } from '../../scripts/deploy/haproxy-config.js';
import { aptInstall } from '../support/debian.js';

const installed = () => {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

/** Whether HAProxy can run here, after installing Debian's package when it is missing. */
export function ensureHaproxy(): boolean {
  if (installed()) return true;
  try {
    aptInstall(['haproxy'], { recommends: false });
  } catch {
    try {
      aptInstall(['haproxy'], { update: true, recommends: false });
    } catch {
      return false;
    }
  }
  return installed();
}

export interface Haproxy {
  child: ChildProcess;
  /** Where clients connect. */
  port: number;
  /** Server name to HAProxy's status for it (UP, DOWN, "UP 1/2", MAINT, …). */
  states(): Promise<Record<string, string>>;
  /** Resolves with the time when the server has the status, within the time limit. */
  waitFor(server: string, status: 'UP' | 'DOWN', timeoutMs?: number): Promise<number>;
  output(): string;
  stop(): Promise<void>;
}

export function startHaproxy(topology: LoopbackTopology, file: string): Haproxy {
  writeFileSync(file, haproxyConfig(topology));
  execFileSync('haproxy', ['-c', '-q', '-f', file]);
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const states = async () => {
    const csv = await (await fetch(`http://127.0.0.1:${topology.stats}/stats;csv`)).text();
    const [header = '', ...rows] = csv.replace(/^# /, '').trim().split('\n');
    const columns = header.split(',');
    const [name, status, proxy] = ['svname', 'status', 'pxname'].map((column) => columns.indexOf(column));
    return Object.fromEntries(
      rows
        .map((row) => row.split(','))
        .filter((cells) => cells[proxy as number] === 'dss' && (cells[name as number] ?? '') in topology.servers)
        .map((cells) => [cells[name as number], cells[status as number]]),
    ) as Record<string, string>;
  };
  return {
    child,
    port: topology.bind,
    states,
    output: () => output,
    async waitFor(server, status, timeoutMs = 30_000) {
      const started = Date.now();
      while (Date.now() - started < timeoutMs && child.exitCode === null) {
        try {
          // "UP 1/2" is on its way down, "DOWN 1/2" on its way up: up means all the way, down any DOWN.
          const state = (await states())[server] ?? '';
          if (status === 'UP' ? state === 'UP' : state.startsWith('DOWN')) return Date.now();
        } catch {
          // not listening yet
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const now = await states().catch((error: Error) => error.message);
      throw new Error(
        `HAProxy did not mark ${server} ${status} within ${timeoutMs} ms: ${JSON.stringify(now)}\n${output}`,
      );
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
