// `npm run keys -- <command>`: issue, list and revoke API keys. Keys are shown once, at creation; the
// database keeps only a hash of their secret part.
import { parseArgs } from 'node:util';
import { issueKey, listKeys, revokeKey } from '../accounts/keys.js';
import { ConfigError, readConfig } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrations.js';

const USAGE = `Usage: npm run keys -- <command>

  create --account <name> [--label <text>]   Issue a key for the account (created if new); prints it once.
  list                                        List keys: id, account, label, status, created, last used,
                                              revoked (last used is exact to within a minute).
  revoke <key-id>                             Revoke a key (by the id that list shows, or the whole key).
  help                                        Show this text.

The database is the one DATABASE_URL names (default sqlite:data/domain-space.sqlite).`;

class UsageError extends Error {}

const OPTIONS = {
  account: { type: 'string' },
  label: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** parseArgs, with its errors (a missing value, an unknown option) said in a sentence of our own. */
function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const option = /'(-[^' ]+)/.exec(String((error as Error).message))?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      throw new UsageError(
        `The option ${option} needs a value, as in ${option} ${option === '--label' ? '"ci job"' : 'acme'}.`,
      );
    }
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`Unknown option ${option}.`);
    throw new UsageError(String((error as Error).message));
  }
}

const table = (rows: string[][]) =>
  rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(Math.max(...rows.map((r) => r[i]?.length ?? 0))))
      .join('  ')
      .trimEnd(),
  );

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parse(argv);
  const [command, ...rest] = positionals;
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError('Name a command.');
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
      const rows = keys.map((k) => [
        k.publicId,
        k.account,
        k.label ?? '',
        k.revokedAt ? 'revoked' : 'active',
        k.createdAt,
        k.lastUsedAt ?? 'never',
        k.revokedAt ?? '',
      ]);
      const header = ['KEY ID', 'ACCOUNT', 'LABEL', 'STATUS', 'CREATED', 'LAST USED', 'REVOKED'];
      console.log(table([header, ...rows]).join('\n'));
    } else {
      const [id] = rest;
      if (!id) throw new UsageError('revoke needs the key id (see list).');
      if (await revokeKey(db, id)) {
        console.log(`Key ${id} revoked. Requests with it now get 401.`);
        return;
      }
      const known = (await listKeys(db)).find((k) => k.publicId === id || id.startsWith(`dss_${k.publicId}_`));
      console.error(
        known?.revokedAt
          ? `Key ${known.publicId} was already revoked at ${known.revokedAt}.`
          : `No key with id ${id}. npm run keys -- list shows the key ids.`,
      );
      process.exitCode = 1;
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
