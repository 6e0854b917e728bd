// Entry point: read configuration, open and migrate the database, make sure someone can call the API,
// listen, and shut down cleanly on SIGTERM/SIGINT.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createApp } from './app.js';
import { forkWorkers, isWorker } from './cluster.js';
import { type Config, ConfigError, readConfig } from './config.js';
import { type Database, openDatabase, redact } from './db/database.js';
import { migrateToLatest } from './db/migrations.js';
import { buildDocsInBackground, docsBuildRequested } from './docs-build.js';
import { firstKeyLines } from './first-key.js';
import type { KeyCheck } from './http/auth.js';
import { DOCS_PAGE } from './http/docs.js';
import { createMetrics, listenForMetrics, type Metrics } from './http/metrics.js';
import { Lifecycle } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { requireTestedNode } from './node-version.js';
import { connectRedis } from './redis.js';
import { SANDBOX_DATABASE_URL, sandboxAccounts, sandboxLines } from './sandbox.js';

async function main(): Promise<void> {
  requireTestedNode();
  // `npm run sandbox`: the same service on a throw-away database, any well-formed key an account (sandbox.ts).
  const sandbox = process.argv.includes('--sandbox');
  const config = readConfig(sandbox ? { ...process.env, DATABASE_URL: SANDBOX_DATABASE_URL } : process.env);
  const logger = createLogger(config.logLevel);
  const db = openDatabase(config.databaseUrl);
  if (!isWorker) await migrateToLatest(db);
  const { metricsPort, metricsToken } = config;
  // Per process: with WORKERS > 1, /metrics behind METRICS_TOKEN shows the worker that answered it.
  const metrics = metricsPort !== undefined || metricsToken ? createMetrics() : undefined;
  const keyCheck = sandbox ? sandboxAccounts(db) : undefined;
  const server =
    config.workers > 1 && !isWorker
      ? superviseWorkers(config.workers, db, logger)
      : await serve(config, db, logger, { metrics, keyCheck });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  if (isWorker) return; // the primary issues the first key and prints the banner

  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
  const lines = [
    `domain-space-service listening on ${base} (database ${redact(config.databaseUrl)})`,
    `  API docs: ${base}/docs${existsSync(DOCS_PAGE) ? '' : docsPending()}`,
    `  OpenAPI spec: ${base}/openapi.yaml`,
  ];
  if (metrics && metricsPort !== undefined) {
    const { port: at } = (await listenForMetrics(metrics, metricsPort, config.host)).address() as AddressInfo;
    lines.push(`  Metrics: ${base.replace(/:\d+$/, `:${at}`)}/metrics`);
  }
  if (metricsToken) lines.push(`  Metrics: ${base}/metrics (with Authorization: Bearer $METRICS_TOKEN)`);
  // Only once listening: a key issued before a failed start would be stored but never shown.
  const apiUrl = `${base}/api/v1`;
  lines.push(
    ...(sandbox ? sandboxLines(apiUrl) : await firstKeyLines(db, { apiUrl, file: config.firstKeyFile, logger })),
  );
  console.log(lines.join('\n'));
  if (docsBuildRequested()) buildDocsInBackground();
}

/** Why the docs page is missing: npm start is building it (docs-build.ts), or nobody built it yet. */
const docsPending = () =>
  docsBuildRequested() ? ' (being built, ready in seconds)' : ' (not built yet: run `npm run docs`)';

/** This process serves: the app behind bounded connections, drained on SIGTERM/SIGINT. */
async function serve(
  config: Config,
  db: Database,
  logger: Logger,
  extra: { metrics: Metrics | undefined; keyCheck: KeyCheck | undefined },
) {
  const lifecycle = new Lifecycle(config.limits, logger);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
  const rateLimit = {
    perKey: config.rateLimit,
    authFailures: config.authFailureLimit,
    redis,
    redisPrefix: config.redisPrefix,
  };
  const app = await createApp({
    db,
    logger,
    corsOrigins: config.corsOrigins,
    isDraining: lifecycle.isDraining,
    hstsMaxAgeSeconds: config.hstsMaxAgeSeconds,
    rateLimit,
    trustProxy: config.trustProxy,
    metrics: extra.metrics,
    metricsToken: config.metricsToken,
    ...(extra.keyCheck ? { keyCheck: extra.keyCheck } : {}),
  });
  const listening = lifecycle.listen(app, config.port, config.host);
  // Installed before the banner is printed: whoever reads it may stop the service at once.
  lifecycle.drainOn(['SIGTERM', 'SIGINT'], async () => {
    await db.destroy();
    await redis?.close();
  });
  return listening;
}

/** WORKERS > 1: this process forks and supervises (server/cluster.ts); on a signal each worker drains. */
function superviseWorkers(count: number, db: Database, logger: Logger) {
  const pool = forkWorkers(count, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal, workers: count });
    pool.close(async () => {
      await db.destroy();
      logger.info('stopped', { exit_code: 0 });
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return pool;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
  } else {
    console.error(`domain-space-service could not start: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
