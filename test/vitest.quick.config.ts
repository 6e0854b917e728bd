// `npm run test:quick`: the inner loop. The same suites as `npm test` minus the ones that start other programs
// (Chromium, Prism, npm pack, tsc, the generators, the service as a child process, the conformance CLI) or wait
// out real time (Retry-After, rate-limit windows in Redis); CI runs them all.
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        'test/conformance/**',
        'test/service/**',
        'test/deploy/**',
        'test/client/browser.test.ts',
        'test/client/package.test.ts',
        'test/client/fresh-clone.test.ts',
        'test/spec/generators.test.ts',
        'test/client/prism.test.ts',
        'test/docs/docs-page.test.ts',
        'test/docs/docs-build.test.ts',
        'test/docs/code-samples.test.ts',
        'test/spec/generated-drift.test.ts',
        'test/spec/compat-gate.test.ts',
        'test/http/rate-limit-redis.test.ts',
        'test/client/rate-limit.test.ts',
        'test/client/retries.test.ts',
        'test/faults/sqlite-lock.test.ts',
        'test/faults/disk-full.test.ts',
        'test/faults/read-only.test.ts',
        'test/faults/supervisor.test.ts',
        'test/faults/postgres-*.test.ts',
        // Starts the service as a child process, to read its CPU from /proc.
        'test/http/adversarial-input.test.ts',
      ],
    },
  }),
);
