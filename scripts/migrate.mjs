// `npm run migrate`: the pending migrations applied, then exit (server/cli/migrate.ts), from its bundle
// (scripts/bundle.mjs).
import { bundled } from './bundle.mjs';

await import(await bundled('migrate'));
