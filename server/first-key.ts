// The first start's API key, kept out of the log stream: on a terminal it is shown there once; otherwise
// (output piped to a log collector, a container, systemd) it goes to a file only this user can read, and
// the banner and the log carry the file's path, never the key. A file that cannot be written never stops a
// start on its default path (no key is issued; the banner says how to make one); on a path FIRST_KEY_FILE names,
// it does, naming the setting.
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { countKeys, issueKey } from './accounts/keys.js';
import { type Database, fileBesideDatabase } from './db/database.js';
import type { Logger } from './logger.js';

const ACCOUNT = 'demo';

/**
 * FIRST_KEY_FILE's default, named after its database, so that a start on one database never replaces another's
 * key: `first-api-key` in a SQLite database's folder; for PostgreSQL, a name of its server and database in data/.
 */
export function defaultFirstKeyFile(databaseUrl: string): string {
  return fileBesideDatabase(databaseUrl, 'first-api-key');
}

const shellQuote = (text: string) => (/^[\w./-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);

/** The first key's file could not be created where FIRST_KEY_FILE says: a start-up error that names the setting. */
export class FirstKeyFileError extends Error {}

/** Creates the (owner-only, empty) file, replacing a stale one; its descriptor, or the error that prevented it. */
function createKeyFile(file: string): number | NodeJS.ErrnoException {
  try {
    mkdirSync(dirname(resolve(file)), { recursive: true });
    rmSync(file, { force: true });
    const fd = openSync(file, 'wx', 0o600);
    chmodSync(file, 0o600);
    return fd;
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

const KEYS_COMMAND = 'npm run keys -- create --account <name>';

/**
 * Issues the `demo` account's key when the database has no key at all, and returns the banner lines that
 * tell how to call the API (with the key on a terminal, with the file's path otherwise). `fileSet`: the path
 * is FIRST_KEY_FILE's, not the default, so a file that cannot be written there is an error.
 */
export async function firstKeyLines(
  db: Database,
  options: { apiUrl: string; file: string; fileSet?: boolean; logger: Logger; terminal?: boolean },
): Promise<string[]> {
  // The banner goes to stderr (stdout carries only the JSON log): the key is shown when that is a terminal.
  const { apiUrl, file, fileSet = false, logger, terminal = process.stderr.isTTY === true } = options;
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
  const fd = createKeyFile(file);
  if (typeof fd !== 'number') {
    const why = `${fd.code ?? 'error'}: ${fd.message.replace(/^\w+: /, '')}`;
    if (fileSet) {
      throw new FirstKeyFileError(
        `FIRST_KEY_FILE ${resolve(file)} cannot be written (${why}). No API key exists yet, and the first one goes ` +
          'there: point FIRST_KEY_FILE at a file in a folder this user can write (the data folder), or create a ' +
          `key first with ${KEYS_COMMAND}.`,
      );
    }
    logger.warn('no API key exists, and the first one was not created: its file cannot be written', {
      path: resolve(file),
      error: why,
      fix: `set FIRST_KEY_FILE to a file in a writable folder and restart, or run: ${KEYS_COMMAND}`,
    });
    return [
      '',
      `No API key exists, and none was created: the first key's file ${resolve(file)} cannot be written`,
      `(${fd.code ?? 'error'}). Set FIRST_KEY_FILE to a file in a folder this user can write and restart, or`,
      'create a key with the keys command (with the same DATABASE_URL):',
      '',
      `  ${KEYS_COMMAND}`,
      '',
    ];
  }
  try {
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
