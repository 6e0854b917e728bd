// vitest configuration: tests live in test/, each file gets its own app and SQLite file.
import { defineConfig } from 'vitest/config';

const ENGINE_INDEPENDENT = [
  'test/client/browser.test.ts',
  'test/client/package.test.ts',
  'test/client/fresh-clone.test.ts',
  'test/client/prism.test.ts',
  'test/client/timeouts.test.ts',
  'test/client/options.test.ts',
  'test/docs/**',
  'test/spec/**',
  'test/conformance/plan.test.ts',
  'test/conformance/prism-mock.test.ts',
  'test/conformance/prism-proxy.test.ts',
  'test/conformance/preflight.test.ts',
  'test/conformance/rate-limit-fields.test.ts',
  'test/service/node-version.test.ts',
  // The sandbox always runs on its own in-memory SQLite database; the broken server's faults are planted in a
  // proxy, so what it tests (the conformance runner's findings) does not depend on the engine behind it.
  'test/service/sandbox.test.ts',
  'test/conformance/broken-server.test.ts',
  // The faults of SQLite and of the service's supervisor, on their own SQLite files whatever the engine.
  'test/faults/classify.test.ts',
  'test/db/limits.test.ts',
  'test/db/private-files.test.ts',
  'test/faults/sqlite-lock.test.ts',
  'test/faults/disk-full.test.ts',
  'test/faults/read-only.test.ts',
  'test/faults/supervisor.test.ts',
  // 1,100 never-reading connections against the service at a 1,024-descriptor limit: heavy, and about Node's
  // sockets, not the engine (NODE_20_ONLY too).
  'test/service/slow-readers.test.ts',
];

// The deployment's proof (a production install, three instances behind HAProxy on PostgreSQL, backups on both
// engines): each picks its own engines and runs the service under the Node.js at hand, and it is heavy, so it
// runs in one leg only, `npm test` (SQLite, Node 20), not again on PostgreSQL or Node 24.
const ONE_LEG_ONLY = ['test/deploy/**'];

// PostgreSQL's faults (connections terminated, a lock held, a failover): run once, in the PostgreSQL leg.
const POSTGRES_ONLY = ['test/faults/postgres-*.test.ts'];

// What a supervisor's signal does to `npm start` does not depend on the Node.js major: run once, on Node 20.
const NODE_20_ONLY = ['test/faults/supervisor.test.ts', 'test/service/slow-readers.test.ts'];

function excluded(): string[] {
  if (process.env.DSS_TEST_DATABASE === 'postgres') return [...ENGINE_INDEPENDENT, ...ONE_LEG_ONLY];
  const leg = process.env.DSS_TEST_LEG ? ONE_LEG_ONLY : [];
  return [...POSTGRES_ONLY, ...leg, ...(process.env.DSS_TEST_LEG === 'node24' ? NODE_20_ONLY : [])];
}

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // On PostgreSQL, only the suites whose outcome can depend on the engine: the others (the browser, the
    // packed client, the docs page, the spec tooling, Prism's mock) ran unchanged in the SQLite run.
    exclude: excluded(),
    testTimeout: 20_000,
    // One module cache for all files (each file still starts its own app on its own database): on this 2-core
    // machine the suite is CPU-bound, and re-importing the server for every file cost a sixth of its time.
    isolate: false,
    hookTimeout: 30_000,
    // In CI, also a JSON report per database engine (and per extra Node.js leg, DSS_TEST_LEG=node24), from
    // which .ci/run prints its "N passed, N failed" line.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: `test-results/vitest-${reportName()}.json` }]]
      : ['default'],
  },
});

function reportName(): string {
  const engine = process.env.DSS_TEST_DATABASE ?? 'sqlite';
  return process.env.DSS_TEST_LEG ? `${engine}-${process.env.DSS_TEST_LEG}` : engine;
}
