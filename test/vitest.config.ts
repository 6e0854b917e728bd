// vitest configuration: tests live in test/, each file gets its own app and SQLite file.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // In CI, also a JSON report per database engine, from which .ci/run prints its "N passed, N failed" line.
    reporters: process.env.CI
      ? ['default', ['json', { outputFile: `test-results/vitest-${process.env.DSS_TEST_DATABASE ?? 'sqlite'}.json` }]]
      : ['default'],
  },
});
