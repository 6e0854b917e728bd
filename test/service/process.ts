// Runs the service's own scripts (the server entry point, the keys command) as child processes through tsx,
// and waits on their output and exit with event listeners and a bounded timeout.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ROOT = new URL('../../', import.meta.url).pathname;
const DEFAULT_TIMEOUT_MS = 30_000;

export const KEY_PATTERN = /dss_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g;

/** The service as `npm start` runs it: server/main.ts, bundled (scripts/bundle.mjs builds it when stale). */
export const SERVICE = 'scripts/start.mjs';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /**
   * Resolves with the match once the output (stdout and stderr, as they arrived: the banner is on stderr, the JSON
   * log on stdout) matches; rejects on timeout or when the process ends first.
   */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Resolves when the process has ended and its output is complete. */
  exited: Promise<Exit>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<Exit>;
  /** The key a first start issued: from its output on a terminal, else from FIRST_KEY_FILE (its output is a pipe). */
  firstKey(): string | undefined;
}

const running = new Set<Running>();

function withTimeout<T>(promise: Promise<T>, timeoutMs: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms ${what()}`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function runScript(
  script: string,
  args: string[],
  env: Record<string, string>,
  { openFiles, cwd = ROOT }: { openFiles?: number; cwd?: string } = {},
): Running {
  // node with tsx's loader rather than the tsx command, which runs the script in a child of its own:
  // this way a signal (SIGKILL too) reaches the script's process itself.
  // Each run writes a first key to a file of its own (never to the repository's data/, shared by every test).
  const keyDir = env.FIRST_KEY_FILE ? undefined : mkdtempSync(join(tmpdir(), 'dss-first-key-'));
  const keyFile = env.FIRST_KEY_FILE ?? join(keyDir as string, 'first-api-key');
  // Plain JavaScript (scripts/start.mjs and keys.mjs, what npm runs) runs without tsx, as npm runs it.
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const command = [process.execPath, ...loader, script, ...args];
  // A descriptor limit of its own (ulimit -n): bash sets it and execs node, so the child is still the script.
  const [file, ...argv] = openFiles
    ? ['bash', '-c', `ulimit -n ${openFiles} && exec "$@"`, 'bash', ...command]
    : command;
  const child = spawn(file as string, argv, {
    cwd,
    // npm start's docs build would compete with the tests for the CPU; a test that wants it sets DSS_BUILD_DOCS=1.
    // No load balancer waits on a test's SIGTERM: the drain starts at once unless a test sets DRAIN_DELAY_S.
    // Domain checks' DNS lookups stay on this machine (a closed port: a failed lookup at once) unless a test
    // points DNS_SERVERS at its own DNS server.
    env: {
      ...process.env,
      FIRST_KEY_FILE: keyFile,
      DSS_BUILD_DOCS: '0',
      DRAIN_DELAY_S: '0',
      DNS_SERVERS: '127.0.0.1:9',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    output += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    output += chunk;
  });
  const exited = new Promise<Exit>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

  const run: Running = {
    firstKey: () =>
      output.match(KEY_PATTERN)?.[0] ??
      // The service makes the file before it writes the key into it: an empty file is no key yet.
      ((existsSync(keyFile) ? readFileSync(keyFile, 'utf8').trim() : '') || undefined),
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForOutput(pattern, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const found = new Promise<RegExpExecArray>((resolve, reject) => {
        const check = () => {
          const match = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(output);
          if (!match) return;
          child.stdout?.off('data', check);
          child.stderr?.off('data', check);
          resolve(match);
        };
        child.stdout?.on('data', check);
        child.stderr?.on('data', check);
        exited.then(
          (exit) =>
            reject(new Error(`process ended (code ${exit.code}) before printing ${pattern}\n${stdout}\n${stderr}`)),
          reject,
        );
        check();
      });
      return withTimeout(found, timeoutMs, () => `waiting for ${pattern}; stdout:\n${stdout}\nstderr:\n${stderr}`);
    },
    async stop(signal = 'SIGTERM', timeoutMs = DEFAULT_TIMEOUT_MS) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return withTimeout(exited, timeoutMs, () => `waiting for exit after ${signal}`);
    },
  };
  running.add(run);
  exited
    .finally(() => {
      running.delete(run);
      if (keyDir) rmSync(keyDir, { recursive: true, force: true });
    })
    .catch(() => {});
  return run;
}

/** npm start's entry point on port 0 with `env`, once it has printed where it listens (its banner, on stderr). */
export async function startListening(
  env: Record<string, string>,
  timeoutMs = 90_000,
): Promise<{ server: Running; url: string; banner: string }> {
  const server = runScript(SERVICE, [], { PORT: '0', HOST: '127.0.0.1', ...env });
  const [banner] = await server.waitForOutput(/listening on [\s\S]*curl [^\n]*\n/, timeoutMs);
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
  if (!url) throw new Error(`no URL in:\n${banner}`);
  return { server, url, banner };
}

/** Runs a script to its end and returns its exit code and output. */
export function runToExit(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Exit> {
  const run = runScript(script, args, env);
  return withTimeout(run.exited, timeoutMs, () => `waiting for ${script} ${args.join(' ')} to end`);
}

/** Stops whatever a test left running, so that no server outlives its test file. */
export async function stopAll(): Promise<void> {
  await Promise.all(
    [...running].map(async (run) => {
      try {
        await run.stop('SIGTERM', 5_000);
      } catch {
        run.child.kill('SIGKILL');
      }
    }),
  );
}
