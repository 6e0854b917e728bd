// `npm run migrate`: applies the pending migrations to the database DATABASE_URL names and exits, so that an
// upgrade can migrate before any instance of the new release starts (scripts/deploy/OPERATIONS.md "Upgrades and
// migrations"); `npm start` still migrates by itself. One JSON log line per migration applied (its name and
// duration), then one that says how it ended.
import { DEFAULT_DATABASE_URL, describeStartupError, MIGRATION_LIMITS, openDatabase, redact } from '../db/database.js';
import { migrateToLatest } from '../db/migrations.js';
import { createLogger } from '../logger.js';

async function run(): Promise<number> {
  const logger = createLogger('info');
  // DATABASE_URL alone, as the service reads it: the rest of the configuration is the server's.
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const database = redact(databaseUrl);
  const started = performance.now();
  const applied: string[] = [];
  try {
    const db = openDatabase(databaseUrl, { limits: MIGRATION_LIMITS });
    try {
      const { newer } = await migrateToLatest(db, {
        applied: (name, durationMs) => {
          applied.push(name);
          logger.info('migration applied', { migration: name, duration_ms: durationMs });
        },
        gaveWay: (attempt) =>
          logger.info('migration gave way: a table it changes is in use; trying again', { attempt }),
      });
      logger.info(applied.length > 0 ? 'migrated' : 'nothing to migrate', {
        database,
        applied: applied.length,
        duration_ms: Math.round(performance.now() - started),
        ...(newer.length > 0 ? { newer_migrations: newer } : {}),
      });
    } finally {
      await db.destroy();
    }
    return 0;
  } catch (error) {
    const why = describeStartupError(error, databaseUrl) ?? (error instanceof Error ? error.message : String(error));
    logger.error('migration failed', { database, error: why });
    return 1;
  } finally {
    await logger.close();
  }
}

process.exitCode = await run();
