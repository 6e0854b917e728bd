// Files that hold every tenant's records and key hashes (the SQLite database, its -wal and -shm, backups) are
// the owner's only: created 0600 in folders made 0700, and never through a link someone else planted.
import { closeSync, constants, fchmodSync, lstatSync, mkdirSync, mkdtempSync, openSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_FOLDER_MODE = 0o700;

/** The folders up to `path`'s, the missing ones made 0700 (existing ones are left as the operator set them). */
export function makeFolderFor(path: string): void {
  mkdirSync(dirname(resolve(path)), { recursive: true, mode: PRIVATE_FOLDER_MODE });
}

/**
 * An empty file at `path`, 0600, when nothing (not even a link) is there yet; SQLite then opens it as an empty
 * database, and makes its -wal and -shm files with the database file's mode. False when something is there
 * already or the file cannot be made: whoever opens it next says why.
 */
export function createPrivateFile(path: string): boolean {
  try {
    const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_WRONLY, 0o600);
    // The umask may only narrow the mode; fchmod states it whatever the umask is.
    fchmodSync(fd, PRIVATE_FILE_MODE);
    closeSync(fd);
    return true;
  } catch {
    return false;
  }
}

/**
 * A folder only this user can enter, beside `path` (mkdtemp: a fresh name, made 0700 in one step), for a file
 * that is written there and then linked into place: nobody can plant a link inside it, or read it half-written.
 */
export function privateWorkFolder(path: string): string {
  return mkdtempSync(join(dirname(resolve(path)), `.${basename(path)}.tmp-`));
}

/** Whether anything, a dangling link too, is at `path` (existsSync follows links, and says no for a dangling one). */
export function anythingAt(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
