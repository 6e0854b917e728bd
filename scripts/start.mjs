// `npm start` and `npm run sandbox`: the service, from its bundle (scripts/bundle.mjs builds it when stale).
// Arguments (--sandbox) pass through; WORKERS' processes run this same file and find the bundle built.
// DSS_BUILD_DOCS asks the service to build the API docs page once it listens, when the page is missing or
// stale (server/docs-build.ts).
import { bundled } from './bundle.mjs';

process.env.DSS_BUILD_DOCS ??= '1';
await import(await bundled('server'));
