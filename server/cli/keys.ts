// `npm run keys -- <command>`: issue, list and revoke API keys. Keys are shown once, at creation; the
// database keeps only a hash of their secret part.
import { parseArgs } from 'node:util';
import { issueKey, listKeys, revokeKey } from '../accounts/keys.js';
import { ConfigError, readConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrations.js';

const USAGE = `Usage: npm run keys -- <command>

  create --account <name> [--label <text>]   Issue a key for the account (created if new); prints it once.
  list                                        List keys: id, account, label, created, revoked.
  revoke <key-id>                             Revoke a key (by the id that list shows, or the whole key).

The database is the one DATABASE_URL names (default sqlite:data/domain-space.sqlite).`;

class UsageError extends Error {}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { account: { type: 'string' }, label: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (!['create', 'list', 'revoke'].includes(command)) throw new UsageError(`Unknown command "${command}".`);

  const db = openDatabase(readConfig(process.env).databaseUrl);
  try {
    await migrateToLatest(db);
    if (command === 'create') {
      const account = values.account?.trim();
      if (!account) throw new UsageError('create needs --account <name>.');
      const issued = await issueKey(db, account, values.label ?? null);
      console.log(`Key ${issued.publicId} for account "${issued.account.name}". It is shown only this once:\n`);
      console.log(`  ${issued.key}\n`);
    } else if (command === 'list') {
      const keys = await listKeys(db);
      if (keys.length === 0) {
        console.log('No keys yet. Create one: npm run keys -- create --account <name>');
        return;
      }
      const rows = keys.map((k) => [k.publicId, k.account, k.label ?? '', k.createdAt, k.revokedAt ?? 'active']);
      const table = [['KEY ID', 'ACCOUNT', 'LABEL', 'CREATED', 'REVOKED'], ...rows];
      const widths = table[0]?.map((_, i) => Math.max(...table.map((row) => row[i]?.length ?? 0))) ?? [];
      for (const row of table)
        console.log(
          row
            .map((cell, i) => cell.padEnd(widths[i] ?? 0))
            .join('  ')
            .trimEnd(),
        );
    } else {
      const [id] = rest;
      if (!id) throw new UsageError('revoke needs the key id (see list).');
      if (!(await revokeKey(db, id))) {
        console.error(`No active key with id ${id}.`);
        process.exitCode = 1;
        return;
      }
      console.log(`Key ${id} revoked.`);
    }
  } finally {
    await db.destroy();
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof ConfigError) console.error(error.message);
  else console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
