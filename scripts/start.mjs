// `npm start` and `npm run sandbox`: the service, from its bundle (scripts/bundle.mjs builds it when stale).
// Arguments (--sandbox) pass through; WORKERS' processes run this same file and find the bundle built.
// DSS_BUILD_DOCS asks the service to build the API docs page once it listens, when the page is missing or
// stale (server/docs-build.ts).
import cluster from 'node:cluster';
import { bundled } from './bundle.mjs';
import { tracingConfigured } from './tracing-configured.mjs';

// npm writes its banner ("> domain-space-service@… start") to stdout before the service's JSON lines; only
// --silent leaves it out (an .npmrc saying so would hide npm's own errors too). Said once, where a person looks.
const script = process.env.npm_lifecycle_event;
if (
  (script === 'start' || script === 'sandbox') &&
  cluster.isPrimary &&
  process.env.npm_config_loglevel !== 'silent' &&
  !process.stdout.isTTY
) {
  const command = script === 'start' ? 'npm start' : `npm run ${script}`;
  process.stderr.write(
    `npm printed its banner to stdout before the JSON log: run \`${command} --silent\` (or \`node scripts/start.mjs\`) ` +
      'where stdout goes to a log collector\n',
  );
}
process.env.DSS_BUILD_DOCS ??= '1';
// Tracing (OTEL_ variables) registers its loader hook before the service's modules load, in every WORKERS
// process too (each runs this file); without those variables no OpenTelemetry code is read.
if (tracingConfigured(process.env)) await import('./tracing.mjs');
await import(await bundled('server'));
