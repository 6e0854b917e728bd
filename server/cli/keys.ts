// `npm run keys -- <command>`: issue, list, rotate and revoke API keys. Keys are shown once, at creation; the
// database keeps only a hash of their secret part. Every run names its database (stderr) and never makes one.
import { parseArgs } from 'node:util';
import { createKey, keyOptionsOf, revoke, rotate } from '../accounts/key-management.js';
import { parseDuration, parseScopes, SCOPES } from '../accounts/key-policy.js';
import {
  accountsDifferingByCase,
  type KeyListing,
  type KeyOptions,
  keyStatus,
  listKeys,
  usedAfterRotation,
} from '../accounts/keys.js';
import { ConfigError, readConfig } from '../config.js';
import { type Database, describeTarget, isAbsentFile, openDatabase, parseDatabaseUrl } from '../db/database.js';
import { appliedMigrations, migrateToLatest } from '../db/migrations.js';
import { CLI_CAUSE } from '../db/owned.js';
import { webhookFanOut } from '../webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/settings.js';
import { nameProblem, printable, table } from './terminal-text.js';

const USAGE = `Usage: npm run keys -- <command>

  create --account <name> [--label <text>] [--scopes <list>] [--expires-in <duration> | --expires-at <time>]
         [--allow-ip <range>]...
      Issue a key for the account (created if new); prints it once. Without --scopes the key holds every
      scope, those added later too. Scopes: ${SCOPES.join(', ')}
      (a write scope includes its read scope); read stands for every read scope. --expires-in takes 90d, 24h,
      30m, 2w (more than 0); --expires-at a real time with its zone (2027-01-31T00:00:00Z), at most 10 years
      ahead (one in the past is issued expired, with a warning). --allow-ip (repeatable) takes
      an IPv4 or IPv6 address or range (10.0.0.0/8, 2001:db8::/32), printed normalised; one whose meaning
      changes when written another way (::ffff:10.0.0.0/8 is ::/8; 10.0.0.1/8) is refused. Names and labels:
      at most 100 characters, valid UTF-8, none invisible, space-like or a line separator. A new account whose
      name differs only by case from an existing one is refused.
  list
      List keys: id, account, label, status (active, revoked, expired, rotating, rotated), scopes, expiry,
      address ranges, the key that replaced it, created, last used (exact to within a minute), revoked.
  rotate <key-id> [--overlap <duration>]
      Issue a successor (same account, label, scopes, ranges and lifetime) and keep the old key working for
      the overlap (default 24h; 0s ends it now). Prints the new key once.
  revoke <key-id>
      Revoke a key (by the id that list shows, or the whole key; only the id is printed back).
  help
      Show this text.

The database is the one DATABASE_URL names (default sqlite:data/domain-space.sqlite); each run names it on
stderr. A database that does not exist yet (or has no tables of the service) is created only when asked:
add --create-database.`;

/** The command's key events: made by the keys command, queued for the endpoints that take them. */
const CLI_EVENTS = { cause: CLI_CAUSE, subscriber: webhookFanOut(DEFAULT_WEBHOOK_SETTINGS) };

class UsageError extends Error {}
/** A refusal that is no misuse of the command (no usage follows it). */
class Refusal extends Error {}

const OPTIONS = {
  account: { type: 'string' },
  label: { type: 'string' },
  scopes: { type: 'string' },
  'expires-in': { type: 'string' },
  'expires-at': { type: 'string' },
  'allow-ip': { type: 'string', multiple: true },
  overlap: { type: 'string' },
  'create-database': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

const EXAMPLES: Record<string, string> = {
  '--label': '"ci job"',
  '--scopes': 'spaces:read,domains:read',
  '--expires-in': '90d',
  '--expires-at': '2027-01-31T00:00:00Z',
  '--allow-ip': '10.0.0.0/8',
  '--overlap': '24h',
};

/** parseArgs, with its errors (a missing value, an unknown option) said in a sentence of our own. */
function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const option = /'(-[^' ]+)/.exec(String((error as Error).message))?.[1] ?? '';
    if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
      // parseArgs reads a value that starts with "-" as the next option: `--expires-in -5d` is a negative value.
      const next = argv[argv.indexOf(option) + 1];
      if (next !== undefined && /^-\d/.test(next)) throw new UsageError(negative(option, next));
      throw new UsageError(`The option ${option} needs a value, as in ${option} ${EXAMPLES[option] ?? 'acme'}.`);
    }
    if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') throw new UsageError(`Unknown option ${option}.`);
    throw new UsageError(String((error as Error).message));
  }
}

type Values = ReturnType<typeof parse>['values'];

/** The sentence for a negative duration given to an option (shown cut, as any echoed argument). */
function negative(option: string, value: string): string {
  return (
    `${option} takes a duration ahead of now, as ${option} ${EXAMPLES[option] ?? '90d'}; ` +
    `"${cut(value)}" is negative, and a key that expires in the past is no key.`
  );
}

/** The longest piece of an argument printed back: an over-long one is shown by its start. */
const ECHO_MAX = 40;

/** An argument as printed back: escaped (terminal-text.ts) and cut to ECHO_MAX characters, saying how long it was. */
function cut(value: string): string {
  const characters = [...value];
  if (characters.length <= ECHO_MAX) return printable(value);
  return `${printable(characters.slice(0, ECHO_MAX).join(''))}… (${characters.length} characters)`;
}

/** A value of ours or the sentence of the problem (key-policy.ts's parsers): the sentence becomes a usage error. */
function valid<T>(result: T | { error: string }): T {
  if (typeof result === 'object' && result !== null && 'error' in result) throw new UsageError(result.error);
  return result as T;
}

/** Account names and labels are printed by `list`: one that would print unlike itself or alike another is refused. */
function plainText(option: string, value: string): string {
  const problem = nameProblem(value);
  if (problem) throw new UsageError(`${option} ${problem}.`);
  return value;
}

/** What a key id argument may be printed as: a whole key is shown by its public id, never with its secret. */
function shownId(id: string): string {
  const whole = /^dss_([^_]*)_/.exec(id);
  return cut(whole ? (whole[1] ?? '') : id);
}

/** The options of `create`, checked whole before anything is written (by the rules the API's keys follow too). */
function keyOptions(values: Values): KeyOptions {
  if (values['expires-in'] !== undefined && values['expires-at'] !== undefined) {
    throw new UsageError('Give --expires-in or --expires-at, not both.');
  }
  const now = Date.now();
  let expiresAt = values['expires-at'];
  if (values['expires-in'] !== undefined) {
    const given = values['expires-in'];
    if (/^\s*-/.test(given)) throw new UsageError(negative('--expires-in', given));
    const ms = valid(parseDuration(given, '--expires-in'));
    // 0s would issue a key expired from the start: a slip, not a wish (--expires-at names a past time on purpose).
    if (ms <= 0) {
      throw new UsageError(
        `--expires-in must be more than 0, as 90d (got "${cut(given)}"): the key would be expired at once.`,
      );
    }
    expiresAt = new Date(now + ms).toISOString();
  }
  const checked = keyOptionsOf(
    {
      label: values.label ?? null,
      ...(values.scopes !== undefined ? { scopes: valid(parseScopes(values.scopes)) } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(values['allow-ip'] ? { allowedIps: values['allow-ip'] } : {}),
    },
    // Issued all the same when in the past (a test of how clients meet an expired key needs one), but said.
    { allowPast: true, now, names: { label: '--label', expires_at: '--expires-at', allowed_ips: '--allow-ip' } },
  );
  if ('errors' in checked) throw new UsageError(checked.errors.map((error) => error.message).join('\n'));
  if (checked.expiresAt && checked.expiresAt.getTime() <= now) {
    console.error(`Note: --expires-at ${values['expires-at']} is in the past: the key is expired from the start.`);
  }
  return checked;
}

/**
 * The database DATABASE_URL names, opened only when it is the service's: a SQLite file that is not there, or a
 * database without the service's tables, is a mistake in DATABASE_URL far more often than a wish for a new one.
 */
async function openServiceDatabase(databaseUrl: string, create: boolean): Promise<Database> {
  const target = parseDatabaseUrl(databaseUrl);
  if ('error' in target) throw new ConfigError([target.error]);
  const where = describeTarget(target);
  const advice = "Set DATABASE_URL to the service's database, or add --create-database to create one here.";
  if (isAbsentFile(target) && !create) {
    throw new Refusal(`There is no database at ${where}. ${advice}`);
  }
  const db = openDatabase(databaseUrl);
  try {
    if (!create && (await appliedMigrations(db)).length === 0) {
      throw new Refusal(`${where[0]?.toUpperCase()}${where.slice(1)} has no tables of the service. ${advice}`);
    }
    await migrateToLatest(db);
    console.error(`Database: ${where}.`);
    return db;
  } catch (error) {
    await db.destroy();
    throw error;
  }
}

async function run(argv: string[]): Promise<void> {
  const { positionals, values } = parse(argv);
  const [command, ...rest] = positionals;
  if (values.help || command === 'help') {
    console.log(USAGE);
    return;
  }
  if (command === undefined) throw new UsageError('Name a command.');
  if (!['create', 'list', 'revoke', 'rotate'].includes(command)) throw new UsageError(`Unknown command "${command}".`);
  // Everything the command was given is checked before the database is opened.
  // Judged as given: trim() would quietly drop a line separator or a no-break space at either end.
  const account = values.account === undefined ? undefined : plainText('--account', values.account).trim();
  if (command === 'create' && !account) throw new UsageError('create needs --account <name>.');
  const options = command === 'create' ? keyOptions(values) : {};
  const overlapMs = valid(parseDuration(values.overlap ?? '24h', '--overlap'));
  const [id] = rest;
  if ((command === 'revoke' || command === 'rotate') && !id) {
    throw new UsageError(`${command} needs the key id (see list).`);
  }

  const db = await openServiceDatabase(readConfig(process.env).databaseUrl, values['create-database'] === true);
  try {
    if (command === 'create') {
      // Account names are kept as written, but a new one that differs only by case from one that exists is
      // refused: `acme` beside `Acme` is two tenants that look like one in every list.
      const alike = await accountsDifferingByCase(db, account as string);
      if (alike.length > 0) {
        throw new Refusal(
          `The account "${cut(account as string)}" would be new, and differs only by case from ` +
            `${alike.map((name) => `"${printable(name)}"`).join(', ')}, which exists: use --account ` +
            `"${printable(alike[0] as string)}" for a key of that account. Account names that differ only by case are refused.`,
        );
      }
      const { issued } = await createKey(db, account as string, options, CLI_EVENTS);
      console.log(
        `Key ${issued.publicId} for account "${printable(issued.account.name)}". It is shown only this once:\n`,
      );
      console.log(`  ${issued.key}\n`);
    } else if (command === 'list') {
      printList(await listKeys(db));
    } else if (command === 'rotate') {
      await rotateCommand(db, id as string, overlapMs);
    } else {
      await revokeCommand(db, id as string);
    }
  } finally {
    await db.destroy();
  }
}

function printList(keys: KeyListing[]): void {
  if (keys.length === 0) {
    console.log('No keys yet. Create one: npm run keys -- create --account <name>');
    return;
  }
  const rows = keys.map((k) => [
    k.publicId,
    printable(k.account),
    printable(k.label ?? ''),
    keyStatus(k),
    k.scopes === null ? 'all' : k.scopes.join(',') || 'none',
    k.expiresAt ?? 'never',
    k.allowedIps?.join(',') ?? 'any',
    k.replacedBy ? `${k.replacedBy}${usedAfterRotation(k) ? ' (still in use)' : ''}` : '',
    k.createdAt,
    k.lastUsedAt ?? 'never',
    k.revokedAt ?? '',
  ]);
  const header = [
    'KEY ID',
    'ACCOUNT',
    'LABEL',
    'STATUS',
    'SCOPES',
    'EXPIRES',
    'ALLOWED IPS',
    'REPLACED BY',
    'CREATED',
    'LAST USED',
    'REVOKED',
  ];
  console.log(table([header, ...rows]).join('\n'));
  const lingering = keys.filter((k) => usedAfterRotation(k) && keyStatus(k) === 'rotating');
  if (lingering.length > 0) {
    console.error(
      `${lingering.length} rotated key(s) used after their successor was made: ` +
        `${lingering.map((k) => `${k.publicId} (works until ${k.expiresAt})`).join(', ')}. Move their clients to the new key.`,
    );
  }
}

async function rotateCommand(db: Database, id: string, overlapMs: number): Promise<void> {
  const result = await rotate(db, id, overlapMs, CLI_EVENTS);
  if ('rotated' in result) {
    const { rotated, oldKeyExpiresAt } = result;
    console.log(
      `Key ${rotated.publicId} replaces ${shownId(id)} for account ` +
        `"${printable(rotated.account.name)}"; the old key works until ${oldKeyExpiresAt}. ` +
        'The new key is shown only this once:\n',
    );
    console.log(`  ${rotated.key}\n`);
    return;
  }
  // The command has no caller to exceed: a rotation of its own is never refused for that.
  if (result.refused === 'exceeds') throw new Error(`rotation refused: ${result.exceeds.join('; ')}`);
  const said = {
    unknown: `No key with id ${shownId(id)}. npm run keys -- list shows the key ids.`,
    revoked: `Key ${shownId(id)} was revoked at ${result.detail}; a revoked key is not rotated.`,
    expired: `Key ${shownId(id)} expired at ${result.detail}; issue a new key with create.`,
    rotated: `Key ${shownId(id)} was rotated already: key ${result.detail} replaces it.`,
  };
  console.error(said[result.refused]);
  process.exitCode = 1;
}

async function revokeCommand(db: Database, id: string): Promise<void> {
  if (await revoke(db, id, CLI_EVENTS)) {
    console.log(`Key ${shownId(id)} revoked. Requests with it now get 401.`);
    return;
  }
  const known = (await listKeys(db)).find((k) => k.publicId === id || id.startsWith(`dss_${k.publicId}_`));
  console.error(
    known?.revokedAt
      ? `Key ${known.publicId} was already revoked at ${known.revokedAt}.`
      : `No key with id ${shownId(id)}. npm run keys -- list shows the key ids.`,
  );
  process.exitCode = 1;
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof ConfigError || error instanceof Refusal) console.error(error.message);
  else console.error(error instanceof Error ? error.message : String(error));
  process.exitCode = 2;
});
