// `npm run test:quick`: the inner loop. The suites test/legs.ts marks `quick`, and every suite it does not list:
// none starts another program (Chromium, Prism, npm pack, tsc, the generators, the service as a child process,
// the conformance CLI) or waits out real time (Retry-After, rate-limit windows); CI runs them all.
import { availableParallelism } from 'node:os';
import { defineConfig, mergeConfig } from 'vitest/config';
import { excludedFrom } from './legs.js';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: excludedFrom('quick'),
      // Every suite here is the app and its client in one process, bound by the CPU and sharing no file: a worker
      // per core (vitest leaves one core to itself by default, which has little to do here: half of a 2-core box).
      maxWorkers: availableParallelism(),
    },
  }),
);
