// `npm run bench:instructions`: the instructions a request costs, counted by valgrind's callgrind, which counts
// instructions, not seconds: the same code, inputs and requests give about the same count whatever else the machine
// is doing (within a tenth, batch to batch), where CPU time per request moves by a third between runs on a shared
// machine. Runs the service the way `npm start` does (of this checkout, or of another with --checkout) or a typical
// peer under callgrind, on a fresh database, with counting off until it answers; sends a scenario of `npm run bench`
// (--warmup requests first, uncounted: V8 tiers its code up by calls, so a count falls for the first 3,000 to 4,000
// requests), then --batches batches of --requests requests, each counted on its own (callgrind_control's zero and
// dump); prints the mean per request (a batch that met a full garbage collection costs more: that is part of the
// cost), and each peer's ratio to the first target. User-space instructions of the target process only: the kernel's
// side of its sockets and files is not in the count, and an instruction is not a fixed time (a cache miss costs more
// than an add), so a count compares code, and `npm run bench` compares speed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { stopAllChildren } from './children.js';
import type { LoadRequest } from './load.js';
import { SCENARIOS, type Scenario, scenarioLoad, seed, seedToDelete, TO_DELETE } from './scenarios.js';
import { startBaseline, startService, type Target, UNREACHABLE_QUOTA } from './targets.js';

const TARGETS = ['service', 'typical-express', 'typical-fastify'] as const;
type TargetName = (typeof TARGETS)[number];
/** Under callgrind a start takes 20 s or more. */
const READY_TIMEOUT_MS = 180_000;

function options() {
  const { values } = parseArgs({
    options: {
      scenarios: { type: 'string', default: 'show' },
      targets: { type: 'string', default: 'service,typical-express' },
      checkout: { type: 'string' },
      requests: { type: 'string', default: '3000' },
      batches: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '4000' },
      connections: { type: 'string', default: '4' },
      help: { type: 'boolean', default: false },
    },
  });
  const usage = `npm run bench:instructions -- [--scenarios ${SCENARIOS.map((s) => s.name).join(',')}]
                                 [--targets ${TARGETS.join(',')}] [--checkout DIR (the service of another checkout)]
                                 [--requests N] [--batches N] [--warmup N] [--connections N]`;
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const scenarios = values.scenarios.split(',').map((name) => SCENARIOS.find((s) => s.name === name));
  const targets = values.targets.split(',').map((name) => TARGETS.find((t) => t === name));
  const numbers = [values.requests, values.batches, values.warmup, values.connections].map(Number);
  if (
    scenarios.includes(undefined) ||
    targets.includes(undefined) ||
    !numbers.every((n) => Number.isInteger(n) && n > 0)
  )
    throw new Error(usage);
  const [requests, batches, warmup, connections] = numbers as [number, number, number, number];
  return {
    scenarios: scenarios as Scenario[],
    targets: targets as TargetName[],
    checkout: values.checkout === undefined ? undefined : `${resolve(values.checkout)}/`,
    requests,
    batches,
    warmup,
    connections,
  };
}

/**
 * callgrind_control on the target's process. Valgrind names its control pipes after the process's HOST and USER
 * variables: the command is given the target's.
 */
function control(pid: number, env: Record<string, string | undefined>, ...args: string[]): void {
  const run = spawnSync('callgrind_control', [...args, String(pid)], { env, encoding: 'utf8' });
  if (run.status !== 0 || !/OK\./.test(run.stdout)) {
    throw new Error(`callgrind_control ${args.join(' ')} failed: ${run.stdout}${run.stderr}`);
  }
}

/** The instructions counted in callgrind's newest dump in `dir` (its `totals:` line). */
function newestDumpTotal(dir: string): number {
  const [newest] = readdirSync(dir)
    .filter((name) => name.startsWith('callgrind.out'))
    .map((name) => join(dir, name))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  const total = newest && /^totals: (\d+)$/m.exec(readFileSync(newest, 'utf8'))?.[1];
  if (!total) throw new Error(`no callgrind dump with totals in ${dir}`);
  return Number(total);
}

/** Sends `count` requests of the scenario over `connections` at once, each awaited; throws on any non-2xx. */
async function send(request: LoadRequest, count: number, connections: number, nextId: () => number): Promise<void> {
  let left = count;
  const one = async () => {
    while (left > 0) {
      left--;
      const url = request.url.replace('{id}', String(nextId()));
      const answer = await fetch(url, {
        method: request.method,
        headers: request.headers,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
      await answer.arrayBuffer();
      if (answer.status >= 300) throw new Error(`${request.method} ${url} answered ${answer.status}`);
    }
  };
  await Promise.all(Array.from({ length: connections }, one));
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

async function measureTarget(
  name: TargetName,
  scenario: Scenario,
  opts: ReturnType<typeof options>,
): Promise<number[]> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-instructions-'));
  let target: Target | undefined;
  try {
    const file = join(dir, 'bench.sqlite');
    const keys = await seed(file);
    const firstId = scenario.path.includes('{id}') ? seedToDelete(file, keys.writerAccount, TO_DELETE) : 0;
    let id = firstId;
    const under = [
      'valgrind',
      '--tool=callgrind',
      '--instr-atstart=no',
      // V8 writes the machine code it runs: callgrind must see code that changes.
      '--smc-check=all-non-file',
      `--callgrind-out-file=${join(dir, 'callgrind.out')}`,
    ];
    const launch = { under, readyTimeoutMs: READY_TIMEOUT_MS };
    target =
      name === 'service'
        ? await startService(file, { RATE_LIMIT: UNREACHABLE_QUOTA }, [], {
            ...launch,
            ...(opts.checkout ? { checkout: opts.checkout } : {}),
          })
        : await startBaseline(name, file, [], launch);
    const pid = target.pid as number;
    const env = { ...process.env, ...(name === 'service' ? { HOST: '127.0.0.1' } : {}) };
    const request = scenarioLoad(scenario, target.base, keys, { connections: opts.connections, duration: 0 });
    control(pid, env, '--instr=on');
    await send(request, opts.warmup, opts.connections, () => id++);
    const perRequest: number[] = [];
    for (let batch = 0; batch < opts.batches; batch++) {
      control(pid, env, '--zero');
      await send(request, opts.requests, opts.connections, () => id++);
      control(pid, env, '--dump');
      perRequest.push(newestDumpTotal(dir) / opts.requests);
    }
    return perRequest;
  } finally {
    await target?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const opts = options();
  const thousands = (n: number) => `${Math.round(n / 1000).toLocaleString('en')}k`;
  const rows: string[] = [];
  for (const scenario of opts.scenarios) {
    const counts: Array<{ name: string; perRequest: number; spread: [number, number] }> = [];
    for (const name of opts.targets) {
      const batches = await measureTarget(name, scenario, opts);
      counts.push({ name, perRequest: mean(batches), spread: [Math.min(...batches), Math.max(...batches)] });
      console.error(
        `${scenario.name} ${name}: batches of ${batches.map(thousands).join(', ')} instructions per request`,
      );
    }
    const [first] = counts;
    const cells = counts.map(
      ({ perRequest, spread }) =>
        `${thousands(perRequest)} (${thousands(spread[0])}–${thousands(spread[1])})` +
        (first && perRequest !== first.perRequest ? `, ${(perRequest / first.perRequest).toFixed(2)}×` : ''),
    );
    rows.push(`| ${scenario.name} | ${cells.join(' | ')} |`);
  }
  const who = opts.targets.map((name) => (name === 'service' && opts.checkout ? `service (${opts.checkout})` : name));
  console.log(`\n| scenario | ${who.join(' | ')} |\n| --- |${' ---: |'.repeat(who.length)}`);
  for (const row of rows) console.log(row);
  console.log(
    `\nInstructions per request, mean of ${opts.batches} batches of ${opts.requests} (min–max) after ${opts.warmup} ` +
      `uncounted, ${opts.connections} connections; ×: ÷ the first target (above 1: more instructions than it).`,
  );
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  await stopAllChildren();
  process.exit(1);
});
