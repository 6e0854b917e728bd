// `npm run bench -- --scale` (or `npx tsx scripts/bench-scale.ts`): how list requests grow with an account's
// size. Seeds 1k, 100k and 1M spaces into one account straight through the database, starts the service as
// `npm start` runs it, and times each list request through HTTP (the median of 5). No ANALYZE after seeding
// unless `--analyze`: a database grown by the API has no statistics but those the engine gathers by itself
// (PostgreSQL's autovacuum, when on, as `--analyze` does). Prints the table with the growth from the smallest to
// the largest size, and writes it as JSON to bench-results/.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { sqliteDriver } from '../server/db/sqlite-driver.js';
import { scratchPostgres } from './bench/postgres-scratch.js';
import { UNREACHABLE_QUOTA } from './bench/targets.js';

export interface ScaleOptions {
  /** Account sizes to measure, ascending. Default 1k, 100k, 1M. */
  sizes?: number[];
  /** Default sqlite; postgres uses DSS_BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres). */
  engine?: 'sqlite' | 'postgres';
  /** Timed requests per cell, the first one included (no warm-up); the median is reported. Default 5. */
  runs?: number;
  /** The checkout whose service is measured (default: this one), e.g. another worktree for a before/after. */
  root?: string;
  /** Where the JSON goes. Default bench-results/. */
  outDir?: string;
  /** Keep the seeded database (its URL is printed) instead of dropping it. */
  keep?: boolean;
  /** Gather the planner's statistics after each seeding (ANALYZE), as autovacuum does on PostgreSQL. Default off. */
  analyze?: boolean;
}

export interface ScaleRow {
  request: string;
  /** Median milliseconds per size, null where the service could not answer it (e.g. an older version). */
  ms: Array<number | null>;
  growth: number | null;
}

const GREEK = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'omega'];
/** Space i's name: one in eight holds "omega" (12.5%); "team 999" matches about 1.1k of 1M. */
const nameOf = (i: number) => `${GREEK[i % GREEK.length]} team ${i}`;

interface Request {
  label: string;
  /** The path and query, given what the walk needs. */
  path: (size: number, cursors: Cursors) => string | undefined;
}

interface Cursors {
  start?: string;
  end?: string;
  nameEnd?: string;
}

const REQUESTS: Request[] = [
  { label: 'GET /spaces (page 1)', path: () => '/spaces' },
  { label: '?page=50', path: () => '/spaces?page=50' },
  { label: '?sort_by=name&sort=asc', path: () => '/spaces?sort_by=name&sort=asc' },
  { label: '?search=omega (12% match)', path: () => '/spaces?search=omega' },
  { label: '?search=team 999 (≈1k match at 1M)', path: () => '/spaces?search=team%20999' },
  { label: '?search=zzz-nothing (no match)', path: () => '/spaces?search=zzz-nothing' },
  { label: '?search=om (2 characters: a scan)', path: () => '/spaces?search=om' },
  { label: 'cursor walk, a page at the start', path: (_, c) => c.start },
  { label: 'cursor walk, a page at the end', path: (_, c) => c.end },
  { label: 'name-sorted cursor walk, a page at the end', path: (_, c) => c.nameEnd },
  { label: '?page=<last> (offset: grows, use the cursor)', path: (size) => `/spaces?page=${Math.ceil(size / 10)}` },
];

/** A throwaway database: a SQLite file in a temporary folder, or a fresh PostgreSQL database. */
async function scratchDatabase(engine: 'sqlite' | 'postgres'): Promise<{ url: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'dss-scale-'));
    return {
      url: `sqlite:${join(dir, 'scale.sqlite')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  return scratchPostgres(
    process.env.DSS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    'dss_scale',
  );
}

/** Adds spaces `from`..`to - 1` to the account, in bulk, with the triggers of the measured version firing. */
async function seed(
  url: string,
  accountId: number,
  range: { from: number; to: number },
  fold: (text: string) => string,
  analyze: boolean,
) {
  const { from, to } = range;
  const now = new Date().toISOString();
  if (url.startsWith('sqlite:')) {
    const sqlite = new (sqliteDriver())(url.slice('sqlite:'.length));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = OFF');
    // Many rows per statement: FTS5 writes out what it holds at the end of every statement of a trigger.
    const insert = sqlite.prepare(
      `insert into spaces (account_id, name, name_key, color, created_at, updated_at)
       select ?, value ->> 0, value ->> 1, value ->> 2, ?, ? from json_each(?)`,
    );
    const batch = sqlite.transaction((start: number, end: number) => {
      for (let at = start; at < end; at += 5_000) {
        const rows = [];
        for (let i = at; i < Math.min(end, at + 5_000); i++) rows.push([nameOf(i), fold(nameOf(i)), (i % 6) + 1]);
        insert.run(accountId, now, now, JSON.stringify(rows));
      }
    });
    for (let start = from; start < to; start += 100_000) batch(start, Math.min(to, start + 100_000));
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
    // No ANALYZE unless asked: a database grown by the API has only the statistics the service gathers itself.
    if (analyze) sqlite.exec('analyze');
    sqlite.close();
    return;
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // Generated by the server (generate_series), 100k rows a statement: the names are plain ASCII, already folded.
    for (let at = from; at < to; at += 100_000) {
      const end = Math.min(to, at + 100_000) - 1;
      if (fold(nameOf(end)) !== nameOf(end)) throw new Error('the seeded names must be their own folded form');
      await client.query(
        `insert into spaces (account_id, name, name_key, color, created_at, updated_at)
         select $1, n, n, (i % 6) + 1, $4, $4
         from generate_series($2::bigint, $3::bigint) as i,
           lateral (select ($5::text[])[i % ${GREEK.length} + 1] || ' team ' || i as n) as named
         order by i`,
        [accountId, at, end, now, GREEK],
      );
    }
    // VACUUM: the visibility map an index-only scan needs, and the GIN index's pending list merged. ANALYZE only
    // when asked (--analyze): a database grown by the API on a server with autovacuum on gets statistics soon;
    // without it, only those the service gathers itself.
    await client.query(analyze ? 'vacuum analyze spaces' : 'vacuum spaces');
  } finally {
    await client.end();
  }
}

/** The service, started the way `npm start` starts it (scripts/start.mjs), on a free port. */
async function startService(root: string, databaseUrl: string): Promise<{ base: string; stop(): Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      RATE_LIMIT: UNREACHABLE_QUOTA,
      DSS_BUILD_DOCS: '0',
      DRAIN_DELAY_S: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let output = '';
  const base = await new Promise<string>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`the service did not start within 60 s:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk;
      const found = /listening on (http:\/\/[^\s]+)/.exec(output);
      if (found?.[1]) {
        clearTimeout(timer);
        ready(found[1]);
      }
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', () => fail(new Error(`the service exited:\n${output}`)));
  });
  return {
    base,
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

async function timed(url: string, key: string): Promise<{ ms: number; status: number; body: unknown }> {
  const started = performance.now();
  const response = await fetch(url, { headers: { Authorization: `Bearer ${key}` } });
  const body = await response.json();
  return { ms: performance.now() - started, status: response.status, body };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

type Encode = (sorting: { sortBy: string; sort: string }, point: { walked: number; position: object }) => string;

/**
 * A cursor page at each end of a walk. The end's cursor is the service's own encoding of the position ten
 * records before the last (a real walk would need size / 100 requests to get there).
 */
async function cursorsOf(
  api: string,
  key: string,
  size: number,
  encode: Encode | undefined,
  fold: (text: string) => string,
): Promise<Cursors> {
  if (!encode) return {};
  const smallest = await timed(`${api}/spaces?sort=asc&per_page=10&after=`, key);
  const largestNames = await timed(`${api}/spaces?sort_by=name&sort=desc&per_page=25&after=`, key);
  const first = (smallest.body as { data: Array<{ id: number }> }).data[0];
  const byName = (largestNames.body as { data: Array<{ id: number; name: string }> }).data[10];
  if (!first || !byName) return {};
  const idCursor = encode(
    { sortBy: 'id', sort: 'desc' },
    { walked: size - 10, position: { id: first.id + 10, nameKey: '' } },
  );
  const nameCursor = encode(
    { sortBy: 'name', sort: 'asc' },
    { walked: size - 11, position: { id: byName.id, nameKey: fold(byName.name) } },
  );
  return {
    start: '/spaces?after=',
    end: `/spaces?after=${idCursor}`,
    nameEnd: `/spaces?sort_by=name&sort=asc&after=${nameCursor}`,
  };
}

export async function runScale(options: ScaleOptions = {}): Promise<ScaleRow[]> {
  const sizes = options.sizes ?? [1_000, 100_000, 1_000_000];
  const engine = options.engine ?? 'sqlite';
  const runs = options.runs ?? 5;
  const root = resolve(options.root ?? new URL('..', import.meta.url).pathname);
  const from = (path: string) => import(pathToFileURL(join(root, path)).href);
  const { openDatabase } = await from('server/db/database.ts');
  const { migrateToLatest } = await from('server/db/migrations.ts');
  const { issueKey } = await from('server/accounts/keys.ts');
  const { foldText } = await from('server/db/listing.ts');
  // A version without cursors (before they existed) gets n/a in their rows.
  const encode: Encode | undefined = await from('server/http/conventions/cursor.ts').then(
    (module) => module.encodeCursor,
    () => undefined,
  );

  const database = await scratchDatabase(engine);
  const rows: ScaleRow[] = REQUESTS.map((request) => ({ request: request.label, ms: [], growth: null }));
  try {
    const db = openDatabase(database.url);
    await migrateToLatest(db);
    const issued = await issueKey(db, 'scale', 'bench-scale');
    await db.destroy();
    let seeded = 0;
    for (const size of sizes) {
      const started = performance.now();
      await seed(database.url, issued.account.id, { from: seeded, to: size }, foldText, options.analyze ?? false);
      console.error(`seeded ${size} spaces (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      seeded = size;
      const service = await startService(root, database.url);
      try {
        const api = `${service.base}/api/v1`;
        const cursors = await cursorsOf(api, issued.key, size, encode, foldText);
        for (const [i, request] of REQUESTS.entries()) {
          const path = request.path(size, cursors);
          const row = rows[i] as ScaleRow;
          // Every request is timed, the first one too (no warm-up: production has none); an answer other than
          // 200 leaves the cell empty.
          const answers = [];
          if (path) for (let run = 0; run < runs; run++) answers.push(await timed(api + path, issued.key));
          if (answers.length === 0 || answers.some((answer) => answer.status !== 200)) {
            row.ms.push(null);
            continue;
          }
          row.ms.push(Number(median(answers.map((answer) => answer.ms)).toFixed(1)));
        }
      } finally {
        await service.stop();
      }
    }
  } finally {
    if (options.keep) console.error(`kept the database: ${database.url}`);
    else await database.drop();
  }
  for (const row of rows) {
    const [first, last] = [row.ms[0], row.ms.at(-1)];
    row.growth = first && last ? Number((last / first).toFixed(1)) : null;
  }
  print(options.analyze ? `${engine}, analyzed` : engine, sizes, rows);
  const outDir = options.outDir ?? join(root, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  const file = join(outDir, `scale-${engine}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify({ engine, analyze: options.analyze ?? false, sizes, runs, rows }, null, 2)}\n`);
  console.log(`\nwritten to ${file}`);
  return rows;
}

const human = (size: number) => (size >= 1e6 ? `${size / 1e6}M` : size >= 1e3 ? `${size / 1e3}k` : String(size));

function print(engine: string, sizes: number[], rows: ScaleRow[]): void {
  const head = [
    'request',
    ...sizes.map((s) => `${human(s)} records`),
    `growth ${human(sizes[0] ?? 0)}→${human(sizes.at(-1) ?? 0)}`,
  ];
  const cell = (ms: number | null) => (ms === null ? 'n/a' : `${ms} ms`);
  console.log(`\nList requests by account size (${engine}, median of each, through HTTP):\n`);
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const row of rows) {
    console.log(
      `| ${[row.request, ...row.ms.map(cell), row.growth === null ? 'n/a' : `${row.growth}×`].join(' | ')} |`,
    );
  }
}

/**
 * `npx tsx scripts/bench-scale.ts [--sizes 1000,100000] [--engine postgres] [--runs 5] [--root DIR] [--keep]
 * [--analyze]`
 */
export function scaleOptionsOf(argv: string[]): ScaleOptions {
  const value = (name: string) => {
    const at = argv.indexOf(`--${name}`);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const sizes = value('sizes')?.split(',').map(Number);
  const engine = value('engine');
  if (engine !== undefined && engine !== 'sqlite' && engine !== 'postgres')
    throw new Error('--engine is sqlite or postgres');
  return {
    ...(sizes ? { sizes } : {}),
    ...(engine ? { engine } : {}),
    ...(value('runs') ? { runs: Number(value('runs')) } : {}),
    ...(value('root') ? { root: value('root') } : {}),
    ...(argv.includes('--keep') ? { keep: true } : {}),
    ...(argv.includes('--analyze') ? { analyze: true } : {}),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runScale(scaleOptionsOf(process.argv.slice(2))).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
