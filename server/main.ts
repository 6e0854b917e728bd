// Entry point: read configuration, open and migrate the database, make sure someone can call the API,
// listen, and shut down cleanly on SIGTERM/SIGINT. stdout carries only the JSON log lines; the banner, for
// whoever started the service, goes to stderr.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createApp, FORMATS } from './app.js';
import { backgroundJobs } from './background.js';
import { backgroundMetrics } from './background-metrics.js';
import { buildInfo } from './build-info.js';
import { forkWorkers, isWorker } from './cluster.js';
import { PrimaryCounterStore, serveCounters } from './cluster-counters.js';
import { type Config, ConfigError, DEFAULTS, developmentSettings, readConfig } from './config.js';
import {
  type Database,
  describeStartupError,
  MIGRATION_LIMITS,
  openDatabase,
  parseDatabaseUrl,
  redact,
} from './db/database.js';
import { migrateToLatest } from './db/migrations.js';
import { serviceSecret } from './db/service-secrets.js';
import { wakeupsOf } from './db/wakeups.js';
import { buildDocsInBackground, docsBuildRequested } from './docs-build.js';
import type { DomainChecks } from './domains/checks.js';
import { routingLookup } from './domains/routing-lookup.js';
import { hasTargets } from './domains/routing-targets.js';
import { txtLookup } from './domains/txt-lookup.js';
import { firstKeyLines } from './first-key.js';
import type { KeyCheck } from './http/access/auth.js';
import { DOCS_PAGE } from './http/pages/docs.js';
import { createClusterMetrics, createMetrics, listenForMetrics, type Metrics } from './http/pipeline/metrics.js';
import { routeTable } from './http/routing/routes.js';
import { prepareValidation } from './http/validation/request-validation.js';
import { startJobs } from './jobs/runner.js';
import { Lifecycle, shutdownBudgetMs } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { requireTestedNode } from './node-version.js';
import { connectRedis } from './redis.js';
import {
  SANDBOX_DATABASE_URL,
  SANDBOX_SETTINGS,
  sandboxAccounts,
  sandboxLines,
  sandboxMaxAccounts,
  sandboxWorkersProblem,
} from './sandbox.js';
import { ApiSpec } from './spec-model.js';
import { flushTraces, reportDroppedSpans, untraced } from './tracing.js';
import { warmUp } from './warm-up.js';
import { webhookMetrics } from './webhooks/metrics.js';

/** The key the sandbox's docs console comes with (the sandbox takes any well-formed key). */
const SANDBOX_CONSOLE_KEY = 'dss_sandbox_console';

async function main(): Promise<void> {
  requireTestedNode();
  // `npm run sandbox`: the same service on a throw-away database, any well-formed key an account (sandbox.ts).
  const sandbox = process.argv.includes('--sandbox');
  const config = readConfig(
    sandbox ? { ...SANDBOX_SETTINGS, ...process.env, DATABASE_URL: SANDBOX_DATABASE_URL } : process.env,
  );
  const maxAccounts = sandboxMaxAccounts(process.env.SANDBOX_MAX_ACCOUNTS);
  if (sandbox) {
    const problems = [
      sandboxWorkersProblem(config.workers),
      typeof maxAccounts === 'object' ? maxAccounts.error : undefined,
    ];
    if (problems.some(Boolean)) throw new ConfigError(problems.filter((problem) => problem !== undefined));
  }
  const logger = createLogger(config.logLevel, undefined, { bufferBytes: config.logBufferBytes });
  const db = openDatabase(config.databaseUrl, { limits: config.databaseLimits, logger });
  if (!isWorker) {
    const { newer } = await migrate(config.databaseUrl, db, logger);
    if (newer.length > 0) {
      logger.warn('the database was migrated by a newer version; running on it as it is', { migrations: newer });
    }
    // The cursor key made now, with the migrations, if this database has none yet: a list then only reads it, so
    // its reads go on while another process holds the write lock or the storage has turned read-only.
    if (!config.cursorKey) await serviceSecret(db, 'cursor');
  }
  const { metricsPort, metricsToken } = config;
  const metricsOn = metricsPort !== undefined || metricsToken !== undefined;
  const primary = config.workers > 1 && !isWorker;
  // With WORKERS > 1 the primary sums the workers' metrics (it answers no requests itself).
  const metrics = metricsOn && !primary ? createMetrics({ logLinesDropped: logger.dropped }) : undefined;
  const exposed = metricsOn && primary ? createClusterMetrics() : metrics;
  const keyCheck = sandbox && typeof maxAccounts === 'number' ? sandboxAccounts(db, maxAccounts) : undefined;
  const server = primary
    ? superviseWorkers(config.workers, db, logger, !config.redisUrl)
    : await serve(config, db, logger, { metrics, keyCheck, sandbox });
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
  let metricsUrl: string | undefined;
  if (exposed && metricsPort !== undefined) {
    const { port: at } = (await listenForMetrics(exposed, metricsPort, config.host)).address() as AddressInfo;
    metricsUrl = `${base.replace(/:\d+$/, `:${at}`)}/metrics`;
    lines.push(`  Metrics: ${metricsUrl}`);
  }
  if (metricsToken) lines.push(`  Metrics: ${base}/metrics (with Authorization: Bearer $METRICS_TOKEN)`);
  // Which release runs, and, as a warning, any setting meant for development left on outside the sandbox.
  const development = sandbox ? [] : developmentSettings(config);
  logger[development.length > 0 ? 'warn' : 'info']('listening', {
    url: base,
    database: redact(config.databaseUrl),
    workers: config.workers,
    max_connections: config.limits.maxConnections,
    ...buildInfo(),
    ...(metricsUrl ? { metrics_url: metricsUrl } : {}),
    ...(development.length > 0 ? { development_settings: development } : {}),
  });
  // Only once listening: a key issued before a failed start would be stored but never shown.
  const apiUrl = `${base}/api/v1`;
  lines.push(
    ...(sandbox
      ? sandboxLines(apiUrl)
      : await firstKeyLines(db, { apiUrl, file: config.firstKeyFile, fileSet: config.firstKeyFileSet, logger })),
  );
  process.stderr.write(`${lines.join('\n')}\n`);
  if (docsBuildRequested()) buildDocsInBackground();
}

/**
 * Applies the migrations, without the serving limits: building an index on a big table may take minutes. On a
 * connection of its own, except for an in-memory database, which another connection would not see.
 */
async function migrate(url: string, db: Database, logger: Logger): Promise<{ newer: string[] }> {
  const applied = (name: string, durationMs: number) =>
    logger.info('migration applied', { migration: name, duration_ms: durationMs });
  const gaveWay = (attempt: number) =>
    logger.info('migration gave way: a table it changes is in use; trying again', { attempt });
  const target = parseDatabaseUrl(url);
  if ('path' in target && target.path === ':memory:') return migrateToLatest(db, { applied });
  const migrating = openDatabase(url, { limits: MIGRATION_LIMITS });
  try {
    return await migrateToLatest(migrating, { applied, gaveWay });
  } finally {
    await migrating.destroy();
  }
}

/** Why the docs page is missing: npm start is building it (docs-build.ts), or nobody built it yet. */
const docsPending = () =>
  docsBuildRequested() ? ' (being built, ready in seconds)' : ' (not built yet: run `npm run docs`)';

/** This process serves: the app behind bounded connections, drained on SIGTERM/SIGINT. */
async function serve(
  config: Config,
  db: Database,
  logger: Logger,
  extra: { metrics: Metrics | undefined; keyCheck: KeyCheck | undefined; sandbox: boolean },
) {
  const verification = config.domainVerification;
  const background = extra.metrics ? backgroundMetrics(extra.metrics.registry, db) : undefined;
  const lookup = background ? background.countLookups(txtLookup(verification.lookup)) : txtLookup(verification.lookup);
  // Routing is looked up only where the operator set a target (DOMAIN_TARGET_*), through the same servers.
  const routing = hasTargets(verification.targets) ? routingLookup(verification.lookup) : undefined;
  const domainChecks: DomainChecks = {
    schedule: verification.schedule,
    lookup,
    ...(routing ? { routing: { targets: verification.targets, lookup: routing } } : {}),
    verifyQuota: verification.verifyQuota,
    sandbox: extra.sandbox,
  };
  const lifecycle = new Lifecycle(config.limits, logger);
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger) : undefined;
  const rateLimit = {
    perKey: config.rateLimit,
    authFailures: config.authFailureLimit,
    redis,
    redisPrefix: config.redisPrefix,
    // Workers without Redis count in the primary: each worker counting alone would multiply every quota. While the
    // primary does not answer, each worker holds its share of each quota (cluster-counters.ts).
    ...(isWorker && !redis
      ? { sharedStore: (name: string) => new PrimaryCounterStore(name, config.workers, logger) }
      : {}),
  };
  const spec = ApiSpec.load();
  // One validation for this app and the warm-up's: what the warm-up's requests compile is what serves.
  const validation = prepareValidation(spec, routeTable(spec), FORMATS);
  const app = await createApp({
    db,
    logger,
    spec,
    validation,
    corsOrigins: config.corsOrigins,
    isDraining: lifecycle.isDraining,
    hstsMaxAgeSeconds: config.hstsMaxAgeSeconds,
    rateLimit,
    trustProxy: config.trustProxy,
    metrics: extra.metrics,
    metricsToken: config.metricsToken,
    cursorKey: config.cursorKey,
    webhooks: config.webhooks,
    events: config.events,
    prepareDocs: true,
    domainChecks,
    // The sandbox takes any well-formed key, so the /docs console comes with one filled in.
    ...(extra.keyCheck ? { keyCheck: extra.keyCheck, docsSandboxKey: SANDBOX_CONSOLE_KEY } : {}),
  });
  // The first request of each kind is prepared before anyone can send it (warm-up.ts).
  await untraced(() =>
    warmUp({ db, spec, validation, docsSandboxKey: extra.keyCheck ? SANDBOX_CONSOLE_KEY : undefined }),
  );
  const listening = lifecycle.listen(app, config.port, config.host);
  // The one place background work starts and stops: every serving process runs the jobs (server/jobs/), each unit
  // claimed in its row, never twice; woken at commit (db/wakeups.ts). Installed before the banner is printed:
  // whoever reads it may stop the service at once.
  const jobs = startJobs(
    backgroundJobs(db, {
      webhooks: config.webhooks,
      events: config.events,
      domainChecks,
      ...(verification.scheduler ? { scheduler: { queriesPerSecond: verification.queriesPerSecond } } : {}),
      logger,
      ...(extra.metrics ? { observer: webhookMetrics(extra.metrics.registry, db) } : {}),
      ...(background ? { pruned: background.pruned } : {}),
    }),
    { db, wakeups: wakeupsOf(db), logger },
  );
  reportDroppedSpans(logger.warn);
  // The runner stops claiming as /readyz turns 503, and stops within the shutdown's budget, whatever
  // WEBHOOK_TIMEOUT_S: an attempt still running then is sent again once its claim runs out.
  const stopJobs = () => jobs.stop({ deadlineMs: shutdownBudgetMs(config.limits) });
  lifecycle.drainOn(
    ['SIGTERM', 'SIGINT'],
    async () => {
      await stopJobs();
      lookup.close();
      routing?.close();
      await db.destroy();
      await redis?.close();
      await flushTraces();
    },
    stopJobs,
  );
  return listening;
}

/** WORKERS > 1: this process forks and supervises (server/cluster.ts); on a signal each worker drains. */
function superviseWorkers(count: number, db: Database, logger: Logger, countersShared: boolean) {
  const stopCounting = countersShared ? serveCounters() : undefined;
  const pool = forkWorkers(count, logger);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal, workers: count });
    pool.close(async () => {
      stopCounting?.();
      await db.destroy();
      logger.info('stopped', { exit_code: 0 });
      await logger.close();
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
    const database = process.env.DATABASE_URL || DEFAULTS.DATABASE_URL;
    const why = describeStartupError(error, database) ?? (error instanceof Error ? error.message : String(error));
    console.error(`domain-space-service could not start: ${why}`);
  }
  process.exit(1);
});
