// `npm run backup -- <file>` and `npm run restore -- <file>`: the SQLite database DATABASE_URL names, copied
// online into a new file (the service keeps serving and writing meanwhile), and made again from such a copy.
// PostgreSQL has pg_dump and pg_restore for that (scripts/deploy/OPERATIONS.md "Backups").
import { parseArgs } from 'node:util';
import { BackupError, BackupUnsupported, backupDatabase, restoreDatabase, type Snapshot } from '../db/backup.js';
import { DEFAULT_DATABASE_URL } from '../db/database.js';
import { RESOURCE_TABLES } from '../db/schema.js';

const USAGE = `Usage: npm run backup -- <file>     Copy the database into <file>, a new file, while the service runs.
       npm run restore -- <file>    Make the database from the backup <file>; only where none exists yet
                                    (stop the service and move the old database away first).

The database is the SQLite file DATABASE_URL names (default sqlite:data/domain-space.sqlite). For PostgreSQL,
use pg_dump --format=custom and pg_restore (scripts/deploy/OPERATIONS.md "Backups").`;

class UsageError extends Error {}

const describe = ({ bytes, rows }: Snapshot) =>
  `${(bytes / 1_048_576).toFixed(1)} MB, integrity ok: ${rows.accounts} accounts, ${rows.api_keys} keys, ` +
  `${RESOURCE_TABLES.map((name) => `${rows[name]} ${name}, `).join('')}${rows.idempotency_keys} idempotency keys`;

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { restore: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0)
    throw new UsageError(file ? `One file only (got ${positionals.length}).` : 'Name the file.');
  // DATABASE_URL alone, as the service reads it: the rest of the configuration is the server's, not a backup's.
  const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const started = Date.now();
  if (values.restore) {
    const { path, snapshot } = await restoreDatabase(databaseUrl, file);
    console.log(`Restored ${file} into ${path} (${describe(snapshot)}). Start the service on it.`);
  } else {
    const { path, snapshot } = await backupDatabase(databaseUrl, file);
    console.log(`Backed up ${path} into ${file} in ${Date.now() - started} ms (${describe(snapshot)}).`);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (
    error instanceof UsageError ||
    error instanceof BackupUnsupported ||
    (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
  ) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (error instanceof BackupError) {
    console.error(error.message);
    process.exitCode = 1;
  } else {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  }
});
