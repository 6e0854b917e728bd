// `npm start` and `npm run sandbox`: the service runs from one bundle of server/ (esbuild; the packages stay in
// node_modules), built into .build/ when it is missing or older than any of its sources. Started this way
// instead of through tsx, the service answers /healthz in about half the time and without the 30 MB of tsx's
// loader thread. Plain JavaScript, so that nothing has to be compiled to run it. Arguments (--sandbox) pass
// through; WORKERS' processes run this same file and find the bundle built. DSS_BUILD_DOCS asks the service to
// build the API docs page once it listens, when the page is missing or stale (server/docs-build.ts). Stack
// traces name the bundle's lines (readable: it is not minified); NODE_OPTIONS=--enable-source-maps maps them to
// server/ at 75 ms more per start.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bundle = join(root, '.build', 'server.mjs');
const inputs = join(root, '.build', 'server.inputs.json');

/** Whether the bundle is missing, or a file it was built from changed (or is gone) since. */
function stale() {
  try {
    const built = statSync(bundle).mtimeMs;
    const sources = JSON.parse(readFileSync(inputs, 'utf8'));
    return sources.some((source) => statSync(join(root, source)).mtimeMs > built);
  } catch {
    return true;
  }
}

async function build() {
  const { build: esbuild } = await import('esbuild');
  const partial = `${bundle}.${process.pid}`;
  const { metafile } = await esbuild({
    entryPoints: [join(root, 'server', 'main.ts')],
    outfile: partial,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20.19',
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
    plugins: [ownLocations],
  });
  // Renamed into place whole: a WORKERS process or a second start never reads half a bundle.
  renameSync(`${partial}.map`, `${bundle}.map`);
  renameSync(partial, bundle);
  writeFileSync(inputs, JSON.stringify(Object.keys(metafile.inputs).map((input) => relative(root, join(root, input)))));
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

if (stale()) await build();
// `--build` (npm ci's prepare step): only the bundle, so that the first start does not have to make it.
if (!process.argv.includes('--build')) {
  process.env.DSS_BUILD_DOCS ??= '1';
  await import(pathToFileURL(bundle).href);
}
