// The first start's API key, kept out of the log stream: on a terminal it is shown there once; otherwise
// (output piped to a log collector, a container, systemd) it goes to a file only this user can read, and
// the banner and the log carry the file's path, never the key.
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { countKeys, issueKey } from './accounts/keys.js';
import { type Database, parseDatabaseUrl } from './db/database.js';
import type { Logger } from './logger.js';

const ACCOUNT = 'demo';

/**
 * FIRST_KEY_FILE's default, named after its database, so that a start on one database never replaces another's
 * key: `first-api-key` in a SQLite database's folder; for PostgreSQL, a name of its server and database in data/.
 */
export function defaultFirstKeyFile(databaseUrl: string): string {
  const target = parseDatabaseUrl(databaseUrl);
  if ('error' in target || (target.kind === 'sqlite' && target.path === ':memory:'))
    return join('data', 'first-api-key');
  if (target.kind === 'sqlite') return join(dirname(target.path), 'first-api-key');
  const { hostname, port, pathname, username } = new URL(target.url);
  const database = decodeURIComponent(pathname.slice(1)) || decodeURIComponent(username) || 'postgres';
  const name = `pg-${hostname || 'localhost'}-${port || '5432'}-${database}`.replace(/[^\w.-]+/g, '_');
  return join('data', `first-api-key.${name}`);
}

const shellQuote = (text: string) => (/^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/**
 * Issues the `demo` account's key when the database has no key at all, and returns the banner lines that
 * tell how to call the API (with the key on a terminal, with the file's path otherwise).
 */
export async function firstKeyLines(
  db: Database,
  options: { apiUrl: string; file: string; logger: Logger; terminal?: boolean },
): Promise<string[]> {
  // The banner goes to stderr (stdout carries only the JSON log): the key is shown when that is a terminal.
  const { apiUrl, file, logger, terminal = process.stderr.isTTY === true } = options;
  if ((await countKeys(db)) > 0) {
    return [
      `  Call it with an API key: curl -s -H 'Authorization: Bearer <key>' ${apiUrl}/domains`,
      '  New key: npm run keys -- create --account <name>',
    ];
  }
  if (terminal) {
    const { key } = await issueKey(db, ACCOUNT, 'created at first start');
    return [
      '',
      `No API key existed, so one was created for account "${ACCOUNT}". It is shown only this once:`,
      '',
      `  ${key}`,
      '',
      'Try it:',
      '',
      `  curl -s -H 'Authorization: Bearer ${key}' ${apiUrl}/domains`,
      '',
    ];
  }
  // The file is made (owner-only) before the key exists: a key that cannot be written is never issued.
  mkdirSync(dirname(resolve(file)), { recursive: true });
  rmSync(file, { force: true });
  const fd = openSync(file, 'wx', 0o600);
  try {
    chmodSync(file, 0o600);
    const { key } = await issueKey(db, ACCOUNT, 'created at first start');
    writeSync(fd, `${key}\n`);
  } finally {
    closeSync(fd);
  }
  logger.info('first API key written to a file', { account: ACCOUNT, path: resolve(file) });
  return [
    '',
    `No API key existed, so one was created for account "${ACCOUNT}" and written to ${file}`,
    '(readable by this user only). It is not printed, so that it stays out of the logs; store it, then',
    'delete the file. Try it:',
    '',
    `  curl -s -H "Authorization: Bearer $(cat ${shellQuote(file)})" ${apiUrl}/domains`,
    '',
  ];
}
