// `npm run bench:profile`: where a request's CPU goes. Runs the service as `npm start` runs it (or a typical peer)
// under `node --cpu-prof` on a fresh database, sends one scenario of `npm run bench` with autocannon in its own
// process, stops the target by its PID and prints the profile as microseconds of CPU per request, by package (our
// code by folder), by file or by function (scripts/bench/cpu-profile.ts). The profiler itself costs CPU: compare
// profiles with profiles, and throughput with `npm run bench`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { stopAllChildren } from './children.js';
import { bundleSources, type CpuProfile, cpuShares, type Grouping } from './cpu-profile.js';
import { measure } from './load.js';
import { SCENARIOS, scenarioLoad, seed, seedToDelete, TO_DELETE } from './scenarios.js';
import { startBaseline, startService, UNREACHABLE_QUOTA } from './targets.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const GROUPINGS: Grouping[] = ['package', 'file', 'function'];
const TARGETS = ['service', 'typical-express', 'typical-fastify'] as const;

function options() {
  const { values } = parseArgs({
    options: {
      scenario: { type: 'string', default: 'show' },
      target: { type: 'string', default: 'service' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '16' },
      by: { type: 'string', default: 'package' },
      top: { type: 'string', default: '25' },
      help: { type: 'boolean', default: false },
    },
  });
  const usage = `npm run bench:profile -- [--scenario ${SCENARIOS.map((s) => s.name).join('|')}] [--target ${TARGETS.join('|')}]
                            [--duration S] [--connections N] [--by ${GROUPINGS.join('|')}] [--top N]`;
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const scenario = SCENARIOS.find((s) => s.name === values.scenario);
  const target = TARGETS.find((t) => t === values.target);
  const by = GROUPINGS.find((g) => g === values.by);
  if (!scenario || !target || !by) throw new Error(usage);
  return {
    scenario,
    target,
    by,
    duration: Number(values.duration),
    connections: Number(values.connections),
    top: Number(values.top),
  };
}

/** The profile with the most samples in `dir`: the main thread's (tsx's loader thread writes one too). */
function mainThreadProfile(dir: string): CpuProfile {
  const profiles = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as CpuProfile)
    .sort((a, b) => b.samples.length - a.samples.length);
  const [main] = profiles;
  if (!main) throw new Error(`the target wrote no profile into ${dir}`);
  return main;
}

async function main(): Promise<void> {
  const opts = options();
  const dir = mkdtempSync(join(tmpdir(), 'dss-profile-'));
  try {
    const file = join(dir, 'bench.sqlite');
    const keys = await seed(file);
    const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'profiles')}`];
    const target =
      opts.target === 'service'
        ? await startService(file, { RATE_LIMIT: UNREACHABLE_QUOTA }, nodeArgs)
        : await startBaseline(opts.target, file, nodeArgs);
    const firstId = opts.scenario.path.includes('{id}') ? seedToDelete(file, keys.writerAccount, TO_DELETE) : undefined;
    const result = await measure(
      scenarioLoad(opts.scenario, target.base, keys, {
        connections: opts.connections,
        duration: opts.duration,
        ...(firstId === undefined ? {} : { firstId }),
      }),
    );
    // The profile is written as the process exits.
    await target.stop();
    if (result.failures > 0) throw new Error(`${result.failures} of ${result.requests} requests failed`);
    const shares = cpuShares(mainThreadProfile(join(dir, 'profiles')), result.requests, {
      by: opts.by,
      sourceOf: bundleSources(),
      root,
    });
    console.log(
      `${opts.target}, ${opts.scenario.method} ${opts.scenario.path}: ${result.requests} requests in ${opts.duration} s ` +
        `(${Math.round(result.requestsPerSecond)}/s under the profiler), ${opts.connections} connections`,
    );
    console.log(`CPU per request: ${shares.busy.toFixed(0)} µs busy (${shares.idle.toFixed(0)} µs idle left out)\n`);
    console.log(`| ${opts.by} | µs/request | share |\n| --- | ---: | ---: |`);
    for (const row of shares.rows.slice(0, opts.top)) {
      console.log(
        `| ${row.owner} | ${row.microseconds.toFixed(1)} | ${((100 * row.microseconds) / shares.busy).toFixed(1)}% |`,
      );
    }
  } finally {
    await stopAllChildren();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  await stopAllChildren();
  process.exit(1);
});
