// The API docs page, built in the background once the service listens (npm start, by DSS_BUILD_DOCS=1): when the
// page is missing or was built from another spec, scripts/docs.ts rebuilds it (seconds, once), and the running
// service serves it as soon as it is written (http/pages/docs.ts). The build is stopped if the service ends first.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../scripts/docs.ts', import.meta.url));

export const docsBuildRequested = () => process.env.DSS_BUILD_DOCS === '1';

export function buildDocsInBackground(): void {
  const build = spawn(process.execPath, ['--import', 'tsx', SCRIPT, '--if-stale'], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    // Its messages go to stderr: stdout carries only the service's JSON log lines.
    stdio: ['ignore', 2, 2],
  });
  build.on('error', () => {});
  const stop = () => {
    if (build.exitCode === null) build.kill();
  };
  process.once('exit', stop);
  build.once('exit', () => process.off('exit', stop));
}
