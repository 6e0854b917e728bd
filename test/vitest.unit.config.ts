// `npm run test:unit`: the rules as tables against the pure functions that hold them (field formats, integers,
// conditional requests, cursors, pagination, Accept negotiation): no server, no database, seconds. `npm test`
// runs them too.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: new URL('..', import.meta.url).pathname,
    include: ['test/unit/**/*.test.ts'],
  },
});
