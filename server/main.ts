// Entry point: read configuration, open and migrate the database, make sure someone can call the API,
// listen, and shut down cleanly on SIGTERM/SIGINT.
import { existsSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { countKeys, issueKey } from './accounts/keys.js';
import { createApp } from './app.js';
import { ConfigError, readConfig } from './config.js';
import { openDatabase, redact } from './db/database.js';
import { migrateToLatest } from './db/migrations.js';
import { DOCS_PAGE } from './http/docs.js';
import { createLogger } from './logger.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function main(): Promise<void> {
  const config = readConfig(process.env);
  const logger = createLogger(config.logLevel);
  const db = openDatabase(config.databaseUrl);
  await migrateToLatest(db);
  const app = await createApp({ db, logger, corsOrigins: config.corsOrigins });

  const server = app.listen(config.port, config.host);
  // Installed before the banner is printed: whoever reads it may stop the service at once.
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down', { signal });
    setTimeout(() => {
      logger.error('shutdown took too long; exiting', { grace_ms: SHUTDOWN_GRACE_MS });
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    server.close(async () => {
      await db.destroy();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // Only once listening: a key issued before a failed start would be stored but never shown.
  const demoKey = (await countKeys(db)) === 0 ? await issueKey(db, 'demo', 'created at first start') : undefined;
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const base = `http://${host === '0.0.0.0' || host === '[::]' ? '127.0.0.1' : host}:${port}`;
  const lines = [
    `domain-space-service listening on ${base} (database ${redact(config.databaseUrl)})`,
    `  API docs: ${base}/docs${existsSync(DOCS_PAGE) ? '' : ' (not built yet: run `npm run docs`)'}`,
    `  OpenAPI spec: ${base}/openapi.yaml`,
  ];
  if (demoKey) {
    lines.push(
      '',
      `No API key existed, so one was created for account "${demoKey.account.name}". It is shown only this once:`,
      '',
      `  ${demoKey.key}`,
      '',
      'Try it:',
      '',
      `  curl -s -H 'Authorization: Bearer ${demoKey.key}' ${base}/api/v1/domains`,
      '',
    );
  } else {
    lines.push(`  Call it with an API key: curl -s -H 'Authorization: Bearer <key>' ${base}/api/v1/domains`);
    lines.push('  New key: npm run keys -- create --account <name>');
  }
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    console.error(error.message);
  } else {
    console.error(`domain-space-service could not start: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
