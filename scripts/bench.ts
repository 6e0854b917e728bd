// `npm run bench`: what the service's request pipeline costs, measured from outside. autocannon runs in its
// own process against the service (as `npm start` runs it) and, in alternating rounds on the same SQLite file,
// against a bare Express app and a node:http app running the same SQL, and against Prism's mock of the spec.
// Prints req/s, p50 and p99 per scenario and target with the ratios, and writes the JSON to bench-results/.
// `--scale` runs the data-growth benchmark of scripts/bench-scale.ts instead.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { checkPeer } from './bench/check-peer.js';
import { cpuMs, rssMb, stopAllChildren } from './bench/children.js';
import { type Measurement, measure } from './bench/load.js';
import { SCENARIOS, type ScenarioName, scenarioLoad, seed, seedToDelete, TO_DELETE } from './bench/scenarios.js';
import { startBaseline, startPrism, startService, type Target, UNREACHABLE_QUOTA } from './bench/targets.js';

const root = fileURLToPath(new URL('..', import.meta.url));

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      connections: { type: 'string', default: '16' },
      rounds: { type: 'string', default: '3' },
      scenarios: { type: 'string', default: SCENARIOS.map((s) => s.name).join(',') },
      targets: { type: 'string', default: 'service,typical-express,typical-fastify,express,node:http,prism' },
      workers: { type: 'string', default: '1' },
      scale: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    strict: false,
  });
  if (values.help) {
    console.log(`npm run bench -- [--duration S] [--connections N] [--rounds N] [--scenarios ${SCENARIOS.map((s) => s.name).join(',')}]
                    [--targets service,typical-express,typical-fastify,express,node:http,prism] [--workers N] [--scale]`);
    process.exit(0);
  }
  const scenarios = String(values.scenarios).split(',');
  const unknown = scenarios.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length) throw new Error(`unknown scenario(s): ${unknown.join(', ')}`);
  return {
    duration: Number(values.duration),
    connections: Number(values.connections),
    rounds: Number(values.rounds),
    scenarios: SCENARIOS.filter((s) => scenarios.includes(s.name)),
    targets: String(values.targets).split(','),
    workers: String(values.workers),
    scale: values.scale === true,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
};

async function main(): Promise<void> {
  const opts = options();
  if (opts.scale) {
    const scale = join(root, 'scripts/bench-scale.ts');
    if (!existsSync(scale)) {
      console.log('The --scale benchmark is not available in this checkout (scripts/bench-scale.ts is missing).');
      return;
    }
    const { runScale, scaleOptionsOf } = (await import(scale)) as typeof import('./bench-scale.js');
    await runScale(scaleOptionsOf(process.argv.slice(2).filter((arg) => arg !== '--scale')));
    return;
  }

  const dir = mkdtempSync(join(tmpdir(), 'dss-bench-'));
  const file = join(dir, 'bench.sqlite');
  try {
    const keys = await seed(file);
    console.log(`Seeded ${file}; starting the targets…`);
    const starters: Record<string, () => Promise<Target>> = {
      service: () => startService(file, { WORKERS: opts.workers, RATE_LIMIT: UNREACHABLE_QUOTA }),
      'typical-express': () => startBaseline('typical-express', file),
      'typical-fastify': () => startBaseline('typical-fastify', file),
      express: () => startBaseline('express', file),
      'node:http': () => startBaseline('node:http', file),
      prism: () => startPrism(),
    };
    const targets: Target[] = [];
    for (const name of opts.targets) {
      const starter = starters[name];
      if (!starter) throw new Error(`unknown target ${name}`);
      targets.push(await starter());
    }
    const service = targets.find((t) => t.name === 'service');
    if (service) console.log(`service: launch to first 200 on /healthz ${Math.round(service.startMs)} ms`);
    // No figure before each typical peer is shown to validate and answer like the service.
    if (service) {
      for (const peer of targets.filter((t) => t.name.startsWith('typical-'))) {
        await checkPeer(service, peer, keys);
        console.log(`${peer.name}: answers and validates like the service (checked)`);
      }
    }

    const results = new Map<string, Array<Measurement & { cpuUsPerRequest?: number }>>();
    const run = async (target: Target, scenario: (typeof SCENARIOS)[number], duration: number) => {
      const firstId = scenario.path.includes('{id}') ? seedToDelete(file, keys.writerAccount, TO_DELETE) : undefined;
      const cpuBefore = await cpuMs(target.pid);
      const result = await measure(
        scenarioLoad(scenario, target.base, keys, {
          connections: opts.connections,
          duration,
          ...(firstId === undefined ? {} : { firstId }),
        }),
      );
      if (result.failures > 0) {
        throw new Error(`${target.name} ${scenario.name}: ${result.failures} of ${result.requests} requests failed`);
      }
      const cpuAfter = await cpuMs(target.pid);
      const cpuUsPerRequest =
        cpuBefore === undefined || cpuAfter === undefined
          ? undefined
          : ((cpuAfter - cpuBefore) * 1000) / result.requests;
      return { ...result, cpuUsPerRequest };
    };
    // No warm-up: production meets every target from cold too, and the rounds alternate who goes first.
    for (let round = 0; round < opts.rounds; round++) {
      for (const scenario of opts.scenarios) {
        // Alternate who goes first, so that drift over the run falls on every target alike.
        const order = targets.map((_, i) => targets[(i + round) % targets.length] as Target);
        for (const target of order) {
          const result = await run(target, scenario, opts.duration);
          const key = `${scenario.name}\u0000${target.name}`;
          results.set(key, [...(results.get(key) ?? []), result]);
          process.stdout.write(
            `round ${round + 1}/${opts.rounds} ${scenario.name.padEnd(9)} ${target.name.padEnd(9)} ${Math.round(result.requestsPerSecond)} req/s\n`,
          );
        }
      }
    }
    const rss = service ? await rssMb(service.pid) : undefined;

    const summary = opts.scenarios.map((scenario) => {
      const of = (name: string) => {
        const rounds = results.get(`${scenario.name}\u0000${name}`);
        if (!rounds) return undefined;
        return {
          requestsPerSecond: Math.round(median(rounds.map((r) => r.requestsPerSecond))),
          p50: median(rounds.map((r) => r.p50)),
          p99: median(rounds.map((r) => r.p99)),
          cpuUsPerRequest: Math.round(median(rounds.map((r) => r.cpuUsPerRequest ?? Number.NaN))),
          rounds: rounds.map((r) => Math.round(r.requestsPerSecond)),
        };
      };
      const byTarget = Object.fromEntries(targets.map((t) => [t.name, of(t.name)]));
      const ratio = (other: string) => {
        const mine = byTarget.service?.requestsPerSecond;
        const theirs = byTarget[other]?.requestsPerSecond;
        return mine && theirs ? Math.round((mine / theirs) * 100) / 100 : undefined;
      };
      // The same comparison by CPU time per request: theirs ÷ mine, so that above 1 means cheaper, like req/s.
      const cpuRatio = (other: string) => {
        const mine = byTarget.service?.cpuUsPerRequest;
        const theirs = byTarget[other]?.cpuUsPerRequest;
        return mine && theirs ? Math.round((theirs / mine) * 100) / 100 : undefined;
      };
      const peers = targets.filter((t) => t.name !== 'service').map((t) => t.name);
      return {
        scenario: scenario.name as ScenarioName,
        ...byTarget,
        ratios: Object.fromEntries(peers.map((name) => [name, ratio(name)])),
        cpuRatios: Object.fromEntries(peers.map((name) => [name, cpuRatio(name)])),
      };
    });
    printTable(summary, targets);
    console.log(
      `\nservice: launch → first 200 on /healthz ${service ? Math.round(service.startMs) : '-'} ms; RSS after the benchmark ${rss ?? '-'} MB`,
    );
    console.log(
      `(${opts.rounds} rounds × ${opts.duration} s, ${opts.connections} connections; medians over rounds; ratios are service req/s ÷ target req/s;\n CPU/req is the target process's CPU time per request, which other load on the machine does not change)`,
    );

    const out = join(root, 'bench-results');
    mkdirSync(out, { recursive: true });
    const path = join(out, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    const meta = {
      date: new Date().toISOString(),
      node: process.version,
      ...opts,
      scenarios: opts.scenarios.map((s) => s.name),
    };
    writeFileSync(
      path,
      `${JSON.stringify({ ...meta, startup_ms: service?.startMs, rss_mb: rss, summary }, null, 2)}\n`,
    );
    console.log(`JSON: ${path}`);
  } finally {
    await stopAllChildren();
    rmSync(dir, { recursive: true, force: true });
  }
}

type Row = {
  scenario: string;
  ratios: Record<string, number | undefined>;
  cpuRatios: Record<string, number | undefined>;
} & Record<string, unknown>;

function printTable(summary: Row[], targets: Target[]): void {
  const cell = (value: unknown) => {
    const v = value as { requestsPerSecond: number; p50: number; p99: number; cpuUsPerRequest: number } | undefined;
    return v ? `${v.requestsPerSecond} (${v.p50}/${v.p99} ms, ${v.cpuUsPerRequest} µs)` : '-';
  };
  const times = (ratio: number | undefined) => (ratio === undefined ? '-' : `${ratio.toFixed(2)}×`);
  const peers = targets.filter((t) => t.name !== 'service');
  const table = (header: string[], rows: string[][]) => {
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
    const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
    console.log(`\n${line(header)}\n${line(widths.map((w) => '-'.repeat(w)))}`);
    for (const row of rows) console.log(line(row));
  };
  table(
    ['scenario', ...targets.map((t) => `${t.name} req/s (p50/p99, CPU/req)`)],
    summary.map((row) => [row.scenario, ...targets.map((t) => cell(row[t.name]))]),
  );
  console.log('\nService req/s ÷ each peer (above 1: the service is faster), and by CPU per request (peer ÷ service):');
  table(
    ['scenario', 'service req/s', ...peers.map((t) => `÷ ${t.name}`), ...peers.map((t) => `CPU ${t.name}`)],
    summary.map((row) => [
      row.scenario,
      String((row.service as { requestsPerSecond?: number } | undefined)?.requestsPerSecond ?? '-'),
      ...peers.map((t) => times(row.ratios[t.name])),
      ...peers.map((t) => times(row.cpuRatios[t.name])),
    ]),
  );
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping every child process`);
    stopAllChildren().finally(() => process.exit(130));
  });
}

main().catch(async (error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  await stopAllChildren();
  process.exit(1);
});
