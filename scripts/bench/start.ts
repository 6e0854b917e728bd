// Cold start: exec of npm start's command (node with its heap and malloc settings, scripts/start.mjs, the docs
// check it asks for) to the first 200 of /readyz, on an existing database (migrated, first key issued) with the
// docs page built: what a restart or a rolling upgrade waits for before a balancer sends the instance traffic.
// Median of --runs; with --compare DIR, the same for another checkout (e.g. a `git archive` of main with its own
// node_modules), runs alternating between the two so that drift on the machine falls on both. --load N runs N
// busy loops of its own beside the starts (stopped by PID at the end). Each run is also told as the CPU time the
// service used until ready (its own, user + system), which load on a shared machine skews less than wall time.
// `npm run bench:start -- [--runs 5] [--workers 2] [--load 8] [--database postgres] [--compare DIR] [--npm]`
import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort, spawnChild, stopAllChildren, stopChild } from './children.js';
import { scratchPostgres } from './postgres-scratch.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    workers: { type: 'string', default: '1' },
    load: { type: 'string', default: '0' },
    database: { type: 'string', default: 'sqlite' },
    compare: { type: 'string' },
    npm: { type: 'boolean', default: false },
  },
});
const RUNS = Number(values.runs);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ROOTS = [ROOT, ...(values.compare ? [resolve(values.compare)] : [])];
const POSTGRES_ADMIN = process.env.DSS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** npm start's environment and node arguments, as that checkout's package.json writes them. */
function npmStart(root: string): { env: Record<string, string>; args: string[] } {
  const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (scripts.start ?? '').split(' ');
  const node = words.indexOf('node');
  const env = Object.fromEntries(
    words.slice(0, node).flatMap((word) => (/^\w+=/.test(word) ? [word.split(/=(.*)/s).slice(0, 2)] : [])),
  );
  return { env, args: words.slice(node + 1) };
}

/** CPU time (user + system) of a process and its children so far, in ms (Linux). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const own = (Number(fields[11]) + Number(fields[12])) * 10;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean);
    return own + children.reduce((sum, child) => sum + cpuMs(Number(child)), 0);
  } catch {
    return 0;
  }
}

/** One start: exec to the first 200 of /readyz; then stopped (SIGTERM, by PID). */
async function startOnce(root: string, env: Record<string, string>): Promise<{ readyMs: number; cpuMs: number }> {
  const port = await freePort();
  const start = npmStart(root);
  const started = performance.now();
  const child: ChildProcess = values.npm
    ? spawnChild('npm', ['start', '--silent', '--prefix', root], { ...env, PORT: String(port) })
    : spawnChild(process.execPath, start.args, { ...start.env, ...env, PORT: String(port) }, false, root);
  const url = `http://127.0.0.1:${port}/readyz`;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`the service of ${root} exited (${child.exitCode}) before it was ready`);
    if (performance.now() - started > 300_000) throw new Error(`the service of ${root} was not ready within 300 s`);
    const status = await fetch(url)
      .then(async (response) => {
        await response.arrayBuffer();
        return response.status;
      })
      .catch(() => 0);
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const result = { readyMs: performance.now() - started, cpuMs: cpuMs(child.pid as number) };
  await stopChild(child);
  return result;
}

/** An existing database: migrated and its first key issued by one start of the first checkout, then stopped. */
async function existingDatabase(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (values.database === 'postgres') return scratchPostgres(POSTGRES_ADMIN, 'dss_bench_start');
  return { url: `sqlite:${join(dir, 'bench.sqlite')}`, drop: async () => {} };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const busy: ChildProcess[] = [];
async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-start-'));
  const database = await existingDatabase(dir);
  try {
    for (const root of ROOTS) {
      // The docs page built, as on a server that has started once (scripts/docs.ts: nothing to do when current).
      if (!existsSync(join(root, '.docs/index.html')) || root === ROOT) {
        execFileSync(process.execPath, ['--import', 'tsx', join(root, 'scripts/docs.ts'), '--if-stale'], {
          cwd: root,
          stdio: 'ignore',
        });
      }
    }
    const env = {
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FIRST_KEY_FILE: join(dir, 'first-key'),
      DRAIN_DELAY_S: '0',
      WORKERS: values.workers,
    };
    // The first start of each checkout migrates (the first) and builds its bundle when stale: not measured.
    for (const root of ROOTS) await startOnce(root, env);
    for (let i = 0; i < Number(values.load); i++) {
      busy.push(spawnChild(process.execPath, ['-e', 'for (;;) {}']));
    }
    const results = new Map<string, Array<{ readyMs: number; cpuMs: number }>>(ROOTS.map((root) => [root, []]));
    for (let run = 0; run < RUNS; run++) {
      for (const root of run % 2 === 0 ? ROOTS : [...ROOTS].reverse()) {
        results.get(root)?.push(await startOnce(root, env));
      }
    }
    const setting = `${values.database}, WORKERS=${values.workers}, load ${values.load}${values.npm ? ', through npm' : ''}`;
    console.log(`exec → first 200 of /readyz (${setting}), ${RUNS} runs, Node ${process.versions.node}:`);
    for (const [root, runs] of results) {
      const ready = runs.map((r) => r.readyMs);
      const cpu = runs.map((r) => r.cpuMs);
      console.log(
        `  ${root}: median ${Math.round(median(ready))} ms (runs ${ready.map(Math.round).join(', ')}); ` +
          `CPU until ready median ${Math.round(median(cpu))} ms`,
      );
    }
  } finally {
    await Promise.all(busy.map(stopChild));
    await stopAllChildren();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.once('SIGINT', () => {
  void Promise.all(busy.map(stopChild))
    .then(stopAllChildren)
    .finally(() => process.exit(130));
});
await main();
