// vitest configuration: tests live in test/, each file gets its own app and SQLite file.
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { currentLeg, excludedFrom, includedIn } from './legs.js';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    // Each leg runs the suites whose outcome can differ there (test/legs.ts: which suite runs where, and why).
    include: includedIn(currentLeg()),
    exclude: excludedFrom(currentLeg()),
    testTimeout: 20_000,
    // Names the run for its workers, and drops the PostgreSQL templates it made when it ends.
    globalSetup: ['test/global-setup.ts'],
    // One module cache for all files (each file still starts its own app on its own database): on this 2-core
    // machine the suite is CPU-bound, and re-importing the server for every file cost a sixth of its time.
    isolate: false,
    // A worker per core (vitest's default leaves one core to itself): the heavy suites mostly wait on the programs
    // they start (npm, HAProxy, Chromium, the service as a child), and the other worker's files use that time.
    maxWorkers: availableParallelism(),
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
