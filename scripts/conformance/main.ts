// DSS_API_KEY=<key> npm run conformance -- --base-url <url> …: runs the checks, prints the report, writes JUnit
// XML when asked, and exits 0 (no check failed), 1 (a check failed or the run broke) or 2 (bad usage, or a target
// that cannot be tested: unreachable, or every request 404 or 401).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { HELP, keysOnCommandLine, parseArgs, UsageError } from './args.js';
import { renderJunit } from './junit.js';
import { PreflightError } from './preflight.js';
import { type ConformanceResult, randomSeed, runConformance } from './run.js';

async function main(): Promise<number> {
  let options: ReturnType<typeof parseArgs>;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`conformance: ${error.message}\n\n${HELP}`);
    return 2;
  }
  if (options.help) {
    process.stdout.write(HELP);
    return 0;
  }
  for (const flag of keysOnCommandLine(process.argv.slice(2))) {
    const variable =
      { '--api-key': 'DSS_API_KEY', '--second-api-key': 'DSS_SECOND_API_KEY' }[flag] ?? 'DSS_READONLY_API_KEY';
    process.stderr.write(
      `warning: ${flag} puts a key on the command line, which npm prints (and ps and shell history keep); ` +
        `export ${variable} instead\n`,
    );
  }
  const seed = options.seed ?? randomSeed();
  // Ctrl-C or SIGTERM: the checks stop, what the run made is deleted, the report says so (exit 130 / 143). A
  // second signal stops at once, leaving the records (the report of the first said which were made).
  const controller = new AbortController();
  let signalled: NodeJS.Signals | undefined;
  let signalledAt = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    // npm and tsx pass a Ctrl-C on to the process that got it too: the same signal within a second is that one.
    if (signalled && Date.now() - signalledAt < 1000) return;
    if (signalled) {
      process.stderr.write(`conformance: ${signal} again: stopping without finishing the clean-up\n`);
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    signalled = signal;
    signalledAt = Date.now();
    process.stderr.write(`conformance: ${signal}: deleting what the run made, then stopping (again to stop at once)\n`);
    controller.abort(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let result: ConformanceResult;
  try {
    result = await runConformance({
      ...options,
      seed,
      signal: controller.signal,
      log: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    if (!(error instanceof PreflightError)) throw error;
    process.stderr.write(`conformance: ${error.message}\n`);
    return 2;
  }
  process.stdout.write(`${result.report}\n`);
  const write = async (file: string, text: string) => {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  };
  if (options.junit) await write(options.junit, renderJunit(result.results, result.secrets, result.durationMs));
  if (options.reportFile) await write(options.reportFile, `${result.report}\n`);
  if (signalled) return signalled === 'SIGINT' ? 130 : 143;
  return result.passed ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`conformance: the run broke: ${(error as Error).stack ?? error}\n`);
    process.exitCode = 1;
  },
);
