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
];

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    // On PostgreSQL, only the suites whose outcome can depend on the engine: the others (the browser, the
    // packed client, the docs page, the spec tooling, Prism's mock) ran unchanged in the SQLite run.
    exclude: process.env.DSS_TEST_DATABASE === 'postgres' ? ENGINE_INDEPENDENT : [],
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
