// The import structure of server/: no circle of imports (type imports included), the database layer imports
// nothing of the registry, the resources or HTTP, the backup command loads the database layer only, inside a
// resource folder only its HTTP adapters import server/http/, runtime code never imports a migration, inside
// server/http/ every import points down its layers (the request context and route table at the bottom, the
// chain composed at the top), and no code outside server/db/ knows the engine (db/database.ts's claim): no import
// of an engine's module or driver, no branch on the engine, no engine-specific SQL or row lock.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SERVER = join(ROOT, 'server');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

// Static imports and re-exports, `import type` among them, and dynamic imports: each is an edge.
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"\n]+)['"]/gm;

/** Each file of server/ (relative to the repository) → the files of ours it imports. */
function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = [...readFileSync(file, 'utf8').matchAll(IMPORT)].map(([, specifier = '']) =>
      relative(ROOT, resolve(dirname(file), specifier.replace(/\.js$/, '.ts'))),
    );
    graph.set(relative(ROOT, file), targets);
  }
  return graph;
}

/** The strongly connected components of more than one file (Tarjan): each is an import circle. */
function importCircles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(next) ?? 0));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) circles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/** Every file `start` loads, directly or through others. */
function reachable(graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const walk = (node: string): void => {
    if (seen.has(node)) return;
    seen.add(node);
    for (const next of graph.get(node) ?? []) walk(next);
  };
  walk(start);
  return seen;
}

const graph = importGraph(sourceFiles(SERVER));

/** The folders of the resources and of the work behind them: their domain code knows nothing of HTTP. */
const RESOURCE_FOLDERS = [
  'server/domains/',
  'server/spaces/',
  'server/webhooks/',
  'server/events/',
  'server/accounts/',
  'server/idempotency/',
  'server/jobs/',
];
/** A folder's HTTP adapter: its handlers and its registration; the idempotency layer is dispatch's runner. */
const isHttpAdapter = (file: string) => /\/(handlers|index)\.ts$/.test(file) || file === 'server/idempotency/runner.ts';

/**
 * A migration is frozen history: the module of one says so in its first line (`// Migration 0005: …`), and only
 * the migrations (server/db/migrations.ts and the other migration modules) load it. What migrations.ts imports
 * besides them is runtime code it uses.
 */
const MIGRATIONS = 'server/db/migrations.ts';
// The runner's: the engine and column types, and which failures are a lock not got in time (it tries again).
const MIGRATION_RUNTIME = ['server/db/database.ts', 'server/db/faults.ts'];
const migrationModules = new Set(
  [...graph.keys()].filter((file) => /^\/\/ Migration \d{4}\b/.test(readFileSync(join(ROOT, file), 'utf8'))),
);

/**
 * The folders of server/http/, bottom first: a file imports only from its own folder or one below it. At the
 * bottom the route table, the request context and the handlers' types (routing/); the problems every step may
 * raise; the steps of every request (pipeline/); the API's conventions (cursors, pagination, conditional
 * requests); validation; access (keys, quotas, scopes, CORS); the pages beside the API; at the top the chain of
 * each operation composed, and dispatch (api/).
 */
const HTTP_LAYERS = ['routing', 'problems', 'pipeline', 'conventions', 'validation', 'access', 'pages', 'api'];
const httpLayerOf = (file: string) => /^server\/http\/([^/]+)\//.exec(file)?.[1];

/** The imports inside server/http/ that run up its layers (or leave a folder no layer names), as `from -> to`. */
function upwardHttpImports(edges: Map<string, string[]>, layers: string[]): string[] {
  return [...edges].flatMap(([file, targets]) => {
    const from = httpLayerOf(file);
    if (from === undefined) return [];
    return targets
      .filter((target) => {
        const to = httpLayerOf(target);
        if (to === undefined) return false;
        const [rankFrom, rankTo] = [layers.indexOf(from), layers.indexOf(to)];
        return rankFrom < 0 || rankTo < 0 || rankTo > rankFrom;
      })
      .map((target) => `${file} -> ${target}`);
  });
}

/** Modules of no layer, which import nothing of the service: the logger and the tracing port. */
const LAYERLESS = ['server/logger.ts', 'server/tracing.ts'];

/** The engine-specific modules of db/ (the dialects, the driver, the SQLite backup) and the engines' drivers. */
const ENGINE_MODULE = /^server\/db\/(sqlite|postgres)-[^/]*\.ts$/;
const ENGINE_PACKAGE = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](better-sqlite3|pg|pg-[\w-]+)['"]/m;
/** The names of db/ that tell the engine: only db/ itself asks them. */
const ENGINE_NAMES = /\bimport\s*(?:type\s*)?\{[^}]*\b(engineOf|columnTypes)\b[^}]*\}\s*from\s*['"][^'"]*\/db\//;
/** What code (comments left out) that knows the engine says: a test of which engine, its SQL, its row locks. */
const ENGINE_CODE: Array<[string, RegExp]> = [
  ['a test of the engine', /(['"`])(sqlite|postgres(ql)?)\1\s*[!=]==|[!=]==\s*(['"`])(sqlite|postgres(ql)?)\4/i],
  ['a row lock', /\.(forUpdate|forNoKeyUpdate|forShare|forKeyShare|skipLocked|noWait)\s*\(/],
  [
    'engine-specific SQL',
    /\b(for\s+(no\s+key\s+)?update|for\s+(key\s+)?share|skip\s+locked|lateral|json_each|json_group_array|not\s+indexed|pragma|pg_(?!dump|restore)\w+)\b/i,
  ],
  ['the engine asked of kysely', /\b(PostgresIntrospector|SqliteIntrospector|introspection)\b/],
];

/** The text without its comments, which may name the engines (explaining why a db/ function exists). */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');

/** Where `text` (of a file outside db/ importing `targets`) knows the engine; empty when it does not. */
function engineKnowledge(text: string, targets: readonly string[]): string[] {
  const code = withoutComments(text);
  const found = targets.filter((target) => ENGINE_MODULE.test(target)).map((target) => `imports ${target}`);
  const driver = ENGINE_PACKAGE.exec(code)?.[1];
  if (driver) found.push(`imports ${driver}`);
  const name = ENGINE_NAMES.exec(code)?.[1];
  if (name) found.push(`imports ${name}`);
  for (const [what, pattern] of ENGINE_CODE) {
    const match = pattern.exec(code);
    if (match) found.push(`${what}: ${match[0]}`);
  }
  return found;
}

describe('the import structure of server/', () => {
  it('has no import circle', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('keeps the database layer free of the registry, the resources and HTTP', () => {
    const outward = [...graph]
      .filter(([file]) => file.startsWith('server/db/'))
      .flatMap(([file, targets]) =>
        targets
          // The logger and the tracing port (server/tracing.ts) import nothing of the service: any layer may use them.
          .filter((target) => !target.startsWith('server/db/') && !LAYERLESS.includes(target))
          .map((target) => `${file} -> ${target}`),
      );
    expect(outward).toEqual([]);
  });

  it('keeps the domain and the event log free of HTTP: only their adapters (handlers.ts, index.ts) import it', () => {
    const upward = [...graph]
      .filter(([file]) => /^server\/(domains|events)\//.test(file) && !/\/(handlers|index)\.ts$/.test(file))
      .flatMap(([file, targets]) =>
        targets.filter((target) => target.startsWith('server/http/')).map((target) => `${file} -> ${target}`),
      );
    expect(upward).toEqual([]);
  });

  it('imports no migration at run time: a migration keeps its own frozen rules', () => {
    const migrations = ['server/db/domain-states.ts', 'server/db/events-and-webhooks.ts'];
    const importers = [...graph]
      .filter(([file]) => file !== 'server/db/migrations.ts')
      .flatMap(([file, targets]) =>
        targets.filter((target) => migrations.includes(target)).map((target) => `${file} -> ${target}`),
      );
    expect(importers).toEqual([]);
  });

  it('loads only the configuration and the database layer for a backup', () => {
    const loaded = [...reachable(graph, 'server/cli/backup.ts')].filter(
      (file) =>
        !file.startsWith('server/db/') && !['server/cli/backup.ts', 'server/config.ts', ...LAYERLESS].includes(file),
    );
    expect(loaded).toEqual([]);
  });

  it('lets only the HTTP adapters of a resource folder import server/http/', () => {
    const edges = [...graph]
      .filter(([file]) => RESOURCE_FOLDERS.some((folder) => file.startsWith(folder)) && !isHttpAdapter(file))
      .flatMap(([file, targets]) =>
        targets.filter((target) => target.startsWith('server/http/')).map((target) => `${file} -> ${target}`),
      );
    expect(edges).toEqual([]);
  });

  it('never loads a migration module outside the migrations', () => {
    const edges = [...graph]
      .filter(([file]) => file !== MIGRATIONS && !migrationModules.has(file))
      .flatMap(([file, targets]) =>
        targets.filter((target) => migrationModules.has(target)).map((target) => `${file} -> ${target}`),
      );
    expect(edges).toEqual([]);
  });

  it('knows every migration module by its first line', () => {
    const imported = (graph.get(MIGRATIONS) ?? []).filter((target) => !MIGRATION_RUNTIME.includes(target));
    expect(imported.filter((target) => !migrationModules.has(target))).toEqual([]);
  });

  it('keeps the engine inside db/: no code outside it imports, tests or speaks an engine', () => {
    const knowing = [...graph]
      .filter(([file]) => !file.startsWith('server/db/'))
      .flatMap(([file, targets]) =>
        engineKnowledge(readFileSync(join(ROOT, file), 'utf8'), targets).map((what) => `${file}: ${what}`),
      );
    expect(knowing).toEqual([]);
  });

  it.each([
    ['a branch on engineOf', "import { engineOf } from '../db/database.js';\nif (engineOf(db) === 'postgres') {}", []],
    ['a target kind', "if (target.kind === 'sqlite') return;", []],
    ['a row lock', 'await query.forUpdate().executeTakeFirst();', []],
    ['a skip-locked claim', 'sql`select id from t where id in (:ids) for update skip locked`', []],
    ['a lateral join', 'sql`from e cross join lateral (:due) p`', []],
    ['json_each', 'sql`join json_each(:x) p`', []],
    ['not indexed', 'sql`update webhook_deliveries not indexed set x = 1`', []],
    ['a dialect module', '', ['server/db/sqlite-driver.ts']],
    ['a driver', "import pg from 'pg';", []],
  ])('finds the engine known in %s', (_name, text, targets) => {
    expect(engineKnowledge(text, targets)).not.toEqual([]);
  });

  it.each([
    ['a named lock of db/', "import { lockedForUpdate } from '../db/database.js';\nawait lockedForUpdate(trx, q);"],
    ['a comment naming the engines', '// FOR UPDATE on PostgreSQL; SQLite: the write lock\nconst x = 1;'],
    ['a URL', "const url = 'http://127.0.0.1/update';"],
    ['a word in a message', "throw new Error('the update of the share failed');"],
  ])('finds no engine in %s', (_name, text) => {
    expect(engineKnowledge(text, ['server/db/database.ts'])).toEqual([]);
  });

  it('keeps server/http/ one way: no import runs back up its layers', () => {
    expect(upwardHttpImports(graph, HTTP_LAYERS)).toEqual([]);
  });

  it.each([
    [
      'downward and within a folder',
      { 'server/http/api/a.ts': ['server/http/routing/b.ts', 'server/http/api/c.ts'] },
      [],
    ],
    [
      'an import back up',
      { 'server/http/routing/b.ts': ['server/http/validation/d.ts'] },
      ['server/http/routing/b.ts -> server/http/validation/d.ts'],
    ],
    [
      'a folder no layer names',
      { 'server/http/extra/e.ts': ['server/http/routing/b.ts'] },
      ['server/http/extra/e.ts -> server/http/routing/b.ts'],
    ],
    ['an import from outside http/', { 'server/app.ts': ['server/http/api/a.ts'] }, []],
  ])('finds in server/http/ %s', (_name, edges, expected) => {
    expect(upwardHttpImports(new Map(Object.entries(edges)), HTTP_LAYERS)).toEqual(expected);
  });

  it.each([
    ['no circle', { 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': [] }, []],
    ['a circle of two', { 'a.ts': ['b.ts'], 'b.ts': ['a.ts'] }, [['a.ts', 'b.ts']]],
    ['a file that imports itself', { 'a.ts': ['a.ts'] }, [['a.ts']]],
    [
      'a circle of three beside a line',
      { 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['a.ts', 'd.ts'], 'd.ts': [] },
      [['a.ts', 'b.ts', 'c.ts']],
    ],
  ])('finds %s', (_name, edges, expected) => {
    expect(importCircles(new Map(Object.entries(edges)))).toEqual(expected);
  });
});
