// `npm run test:quick`: the inner loop. The suites test/legs.ts marks `quick`, and every suite it does not list:
// none starts another program (Chromium, Prism, npm pack, tsc, the generators, the service as a child process,
// the conformance CLI) or waits out real time (Retry-After, rate-limit windows); CI runs them all.
import { defineConfig, mergeConfig } from 'vitest/config';
import { excludedFrom } from './legs.js';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: excludedFrom('quick'),
    },
  }),
);
