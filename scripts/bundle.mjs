// The service's entry points as esbuild bundles in .build/ (gitignored): server/main.ts (npm start),
// server/cli/keys.ts (npm run keys), server/cli/backup.ts (npm run backup and restore) and server/cli/migrate.ts
// (npm run migrate), with the packages they import but those in EXTERNAL (which stay in node_modules): one file
// read and compiled instead of some 700 modules resolved one by one (kysely alone is hundreds), which halves the
// time a start spends loading code. The bundles are rebuilt, all at once, when one is missing or older than any
// file of ours they were built from or than package-lock.json (about 0.5 s). Run from a bundle instead of through
// tsx, a process starts in about half the time and without the 30 MB of tsx's loader thread. Plain JavaScript, so
// that nothing has to be compiled to run it.
// `node scripts/bundle.mjs` (npm ci's prepare step) only builds. Stack traces name the bundles' lines (readable:
// they are not minified); NODE_OPTIONS=--enable-source-maps maps them to server/ at 75 ms more per start.
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, '.build');
const ENTRIES = {
  server: 'server/main.ts',
  keys: 'server/cli/keys.ts',
  backup: 'server/cli/backup.ts',
  migrate: 'server/cli/migrate.ts',
};
const inputs = join(out, 'inputs.json');
/**
 * Packages left in node_modules: native addons, and what the service loads only when configured (PostgreSQL, Redis,
 * metrics, tracing) through createRequire or import() of its own; and express-openapi-validator, which calls
 * url.parse(): Node 24 warns of that (DEP0169) on stderr unless the caller is inside node_modules.
 */
const EXTERNAL = [
  'express-openapi-validator',
  'better-sqlite3',
  'better-sqlite3-node20',
  'pg',
  'redis',
  'prom-client',
  '@opentelemetry/*',
  'esbuild',
  'tsx',
];

/** Whether a bundle is missing, or a file they were built from (or this script) changed (or is gone) since. */
function stale() {
  try {
    const built = Math.min(...Object.keys(ENTRIES).map((name) => statSync(join(out, `${name}.mjs`)).mtimeMs));
    const sources = [...JSON.parse(readFileSync(inputs, 'utf8')), 'scripts/bundle.mjs'];
    return sources.some((source) => statSync(join(root, source)).mtimeMs > built);
  } catch {
    return true;
  }
}

/**
 * Each module keeps its own import.meta.url: the modules find files next to them (the bundled spec, the docs
 * page) and resolve packages from there, exactly as when run from source.
 */
const ownLocations = {
  name: 'own-locations',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => ({
      contents: readFileSync(args.path, 'utf8').replaceAll(
        'import.meta.url',
        JSON.stringify(pathToFileURL(args.path).href),
      ),
      loader: 'ts',
    }));
  },
};

async function build() {
  const { build: esbuild, stop } = await import('esbuild');
  // Built aside, then renamed into place file by file: a WORKERS process or a second start never reads half a
  // bundle.
  const partial = join(root, `.build-${process.pid}`);
  try {
    const { metafile } = await esbuild({
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, join(root, file)])),
      outdir: partial,
      outExtension: { '.js': '.mjs' },
      bundle: true,
      external: EXTERNAL,
      // The packages bundled are CommonJS too: their require() of Node's modules needs a require in the bundle.
      banner: {
        js: "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);",
      },
      platform: 'node',
      format: 'esm',
      target: 'node20.19',
      sourcemap: 'linked',
      metafile: true,
      logLevel: 'warning',
      plugins: [ownLocations],
    });
    mkdirSync(out, { recursive: true });
    for (const name of Object.keys(ENTRIES)) {
      renameSync(join(partial, `${name}.mjs.map`), join(out, `${name}.mjs.map`));
      renameSync(join(partial, `${name}.mjs`), join(out, `${name}.mjs`));
    }
    // The packages bundled are those package-lock.json names: a change of one changes it (npm ci, npm install), and
    // a start need not stat the hundreds of package files.
    const sources = [
      ...Object.keys(metafile.inputs)
        .map((input) => relative(root, join(root, input)))
        .filter((source) => !source.startsWith('node_modules/')),
      'package-lock.json',
    ];
    writeFileSync(inputs, JSON.stringify(sources));
  } finally {
    rmSync(partial, { recursive: true, force: true });
    // esbuild's child process would otherwise live as long as the service, holding what it built (160 MB seen):
    // stopped as its documentation says, once no more builds follow.
    await stop();
  }
}

/** The URL of an entry point's bundle, built first when stale. */
export async function bundled(name) {
  if (stale()) await build();
  return pathToFileURL(join(out, `${name}.mjs`)).href;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (stale()) await build();
}
