// The four targets of one benchmark run, each its own process on a port of its own: the service as
// `npm start` runs it, the two same-SQL baselines on the same database file, and Prism's mock of the spec.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort, spawnChild, stopChild, waitForHttp } from './children.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

export interface Target {
  name: 'service' | 'typical-express' | 'typical-fastify' | 'express' | 'node:http' | 'prism';
  /** Where the spec's paths hang: the service and the baselines under /api/v1, Prism's mock at its root. */
  base: string;
  pid: number | undefined;
  /** Launch to the first answer (for the service: the first 200 on /healthz), in ms. */
  startMs: number;
  stop(): Promise<void>;
}

/** How a target is run: under a command (`valgrind …`, whose node is this one), given this long to answer. */
export interface Launch {
  under?: string[];
  readyTimeoutMs?: number;
}

async function start(
  name: Target['name'],
  args: (port: number) => string[],
  env: Record<string, string>,
  ready: (origin: string) => { url: string; status?: number },
  prefix: string,
  { under = [], readyTimeoutMs }: Launch = {},
): Promise<Target> {
  const port = await freePort();
  const started = performance.now();
  const [command = process.execPath, ...before] = under;
  const argv = [...(under.length > 0 ? [...before, process.execPath] : []), ...args(port)];
  const child = spawnChild(command, argv, { ...env, PORT: String(port) });
  const origin = `http://127.0.0.1:${port}`;
  const check = ready(origin);
  const startMs = await waitForHttp(check.url, started, check.status, readyTimeoutMs);
  return { name, base: `${origin}${prefix}`, pid: child.pid, startMs, stop: () => stopChild(child) };
}

/**
 * The service's RATE_LIMIT in benchmarks: limiting stays on, as in production, with a quota no run can reach
 * (the default 600/60 would turn a benchmark into a measurement of 429s).
 */
export const UNREACHABLE_QUOTA = '999999999/60';

/**
 * How an npm script runs node (package.json's `exec env NAME=value … node …`): the environment it sets (glibc's
 * malloc settings) and node's arguments (its heap settings, the file, its options).
 */
export function npmScript(
  script: 'start' | 'sandbox',
  checkout = root,
): { env: Record<string, string>; args: string[] } {
  const { scripts } = JSON.parse(readFileSync(`${checkout}package.json`, 'utf8')) as {
    scripts: Record<string, string>;
  };
  const words = (scripts[script] ?? '').split(' ');
  const node = words.indexOf('node');
  const env = Object.fromEntries(
    words.slice(0, node).flatMap((word) => (/^\w+=/.test(word) ? [word.split(/=(.*)/s).slice(0, 2)] : [])),
  );
  const args = words.slice(node + 1).map((word) => (word.startsWith('scripts/') ? `${checkout}${word}` : word));
  return { env, args };
}

/**
 * `nodeArgs`: node's options before npm start's own (bench:profile's `--cpu-prof`); `checkout`: the root (ending in
 * `/`) of the checkout whose `npm start` runs, this one by default.
 */
export function startService(
  databaseFile: string,
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  { checkout = root, ...launch }: Launch & { checkout?: string } = {},
): Promise<Target> {
  // What `npm start` runs (node with its heap and malloc settings, the bundle of server/), without its docs
  // build, which would compete for the CPU.
  const npmStart = npmScript('start', checkout);
  return start(
    'service',
    () => [...nodeArgs, ...npmStart.args],
    {
      ...npmStart.env,
      DATABASE_URL: `sqlite:${databaseFile}`,
      HOST: '127.0.0.1',
      DSS_BUILD_DOCS: '0',
      DRAIN_DELAY_S: '0',
      ...env,
    },
    (origin) => ({ url: `${origin}/healthz`, status: 200 }),
    '/api/v1',
    launch,
  );
}

const SCRIPTS = {
  'typical-express': 'typical-express.ts',
  'typical-fastify': 'typical-fastify.ts',
  express: 'express-baseline.ts',
  'node:http': 'http-baseline.ts',
} as const;

/** A peer on the same database file: one of the typical stacks, or a bare baseline; `nodeArgs` as startService's. */
export function startBaseline(
  name: keyof typeof SCRIPTS,
  databaseFile: string,
  nodeArgs: string[] = [],
  launch: Launch = {},
): Promise<Target> {
  const script = SCRIPTS[name];
  return start(
    name,
    () => [...nodeArgs, '--import', 'tsx', `${root}scripts/bench/${script}`],
    { DATABASE_FILE: databaseFile },
    (origin) => ({ url: `${origin}/api/v1/spaces` }),
    '/api/v1',
    launch,
  );
}

export function startPrism(): Promise<Target> {
  return start(
    'prism',
    (port) => [
      `${root}node_modules/@stoplight/prism-cli/dist/index.js`,
      'mock',
      `${root}generated/openapi.yaml`,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { NO_COLOR: '1', FORCE_COLOR: '0' },
    (origin) => ({ url: `${origin}/spaces` }),
    '',
  );
}
