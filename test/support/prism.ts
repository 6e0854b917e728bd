// Starts Prism (the real CLI, on port 0) on the bundled spec: as a mock of the contract, or as a validating
// proxy in front of a real server. Prism serves the spec's paths without the /api/v1 prefix.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const prismBin = `${root}node_modules/.bin/prism`;
export const bundledSpec = `${root}generated/openapi.yaml`;

export interface Prism {
  /** e.g. http://127.0.0.1:41234; the spec's paths hang directly off it (no /api/v1). */
  url: string;
  /** Everything Prism printed so far (its log names each contract violation it saw). */
  output(): string;
  close(): Promise<void>;
}

export type PrismMode =
  | { mode: 'mock'; dynamic?: boolean }
  /** upstream: the real server's API base, e.g. http://127.0.0.1:1234/api/v1. errors: a violation becomes an error answer. */
  | { mode: 'proxy'; upstream: string; errors?: boolean };

export async function startPrism(options: PrismMode = { mode: 'mock' }): Promise<Prism> {
  const args =
    options.mode === 'mock'
      ? ['mock', bundledSpec, ...(options.dynamic ? ['--dynamic'] : [])]
      : ['proxy', bundledSpec, options.upstream, ...(options.errors ? ['--errors'] : [])];
  // The binary itself, not through npx, so the PID held here is Prism's and close() stops it.
  const child = spawn(prismBin, [...args, '--host', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`Prism did not start within 30 s:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /Prism is listening on (http:\/\/[^\s]+)/.exec(output);
      if (listening?.[1]) {
        clearTimeout(timer);
        resolve(listening[1].replace(/\/$/, ''));
      }
    };
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`Prism exited with ${code} before listening:\n${output}`)));
  });
  child.removeAllListeners('exit');
  return { url, output: () => output, close: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
  });
}
