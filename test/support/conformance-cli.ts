// Runs the conformance runner's command line as a child process, as a user would, killed if it hangs.
import { spawn } from 'node:child_process';

export function runCli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    // No coverage state in the user's home: each run's slices follow its seed, unless a test names a file.
    const state = args.some((arg) => arg.startsWith('--state')) ? [] : ['--no-state'];
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/conformance/main.ts', ...args, ...state], {
      cwd: new URL('../..', import.meta.url).pathname,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
      // A hung run is killed rather than left behind when its test times out.
      timeout: 55_000,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
