// npm run workflows -- --base-url <url of /api/v1> --api-key <key>: the Arazzo workflows of spec/workflows/ run
// by `redocly respect` against any deployment. The files name the spec `npm start` serves
// (http://127.0.0.1:3000/openapi.yaml) and the links they follow at that origin; this runs copies that name the deployment's origin instead,
// and prints the respect command it runs. Exit code: respect's (0 when every workflow passed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const WORKFLOWS = join(root, 'spec', 'workflows');
/** The origin of `npm start`, which the files name: their spec (its /openapi.yaml) and the links they follow. */
const SERVED_ORIGIN = 'http://127.0.0.1:3000';
const USAGE =
  'Usage: npm run workflows -- --base-url <url of /api/v1> [--api-key <key> | env DSS_API_KEY] [respect options]';

function main(): number {
  const args = process.argv.slice(2);
  const take = (flag: string) => {
    const at = args.indexOf(flag);
    return at < 0 ? undefined : args.splice(at, 2)[1];
  };
  const baseUrl = take('--base-url') ?? 'http://127.0.0.1:3000/api/v1';
  const apiKey = take('--api-key') ?? process.env.DSS_API_KEY;
  if (!apiKey || !/^https?:\/\/[^/]+/.test(baseUrl)) {
    console.error(USAGE);
    return 2;
  }
  const origin = new URL(baseUrl).origin;
  const dir = mkdtempSync(join(tmpdir(), 'dss-workflows-'));
  try {
    const files = readdirSync(WORKFLOWS)
      .filter((name) => name.endsWith('.arazzo.yaml'))
      .map((name) => {
        const copy = join(dir, name);
        writeFileSync(copy, readFileSync(join(WORKFLOWS, name), 'utf8').replaceAll(SERVED_ORIGIN, origin));
        return copy;
      });
    const respect = ['respect', ...files, '-i', `token=${apiKey}`, ...args];
    console.log(
      `redocly ${respect.join(' ').replaceAll(apiKey, '$DSS_API_KEY').replaceAll(`${dir}/`, 'spec/workflows/')}`,
    );
    const run = spawnSync(join(root, 'node_modules', '.bin', 'redocly'), respect, {
      stdio: 'inherit',
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    });
    return run.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exitCode = main();
