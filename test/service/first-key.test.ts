// The first start's key (server/first-key.ts): shown on a terminal, written to an owner-only file otherwise,
// and issued only when the database has no key at all.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { countKeys } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { defaultFirstKeyFile, FirstKeyFileError, firstKeyLines } from '../../server/first-key.js';
import { createLogger } from '../../server/logger.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { KEY_PATTERN } from './process.js';

const dir = mkdtempSync(join(tmpdir(), 'dss-first-key-'));
const opened: Array<{ db: Database; database: TestDatabase }> = [];
afterAll(async () => {
  for (const { db, database } of opened) {
    await db.destroy();
    await database.drop();
  }
  rmSync(dir, { recursive: true, force: true });
});

async function emptyDatabase(): Promise<Database> {
  const database = await freshDatabase();
  const db = openDatabase(database.url);
  await migrateToLatest(db);
  opened.push({ db, database });
  return db;
}

const apiUrl = 'http://127.0.0.1:3000/api/v1';

describe('the first key', () => {
  it('is shown in the lines for a terminal, and no file is written', async () => {
    const db = await emptyDatabase();
    const file = join(dir, 'terminal');
    const logged: string[] = [];
    const lines = await firstKeyLines(db, {
      apiUrl,
      file,
      logger: createLogger('debug', (l) => logged.push(l)),
      terminal: true,
    });
    const text = lines.join('\n');
    expect(text.match(KEY_PATTERN)).toHaveLength(2);
    expect(text).toContain('shown only this once');
    expect(existsSync(file)).toBe(false);
    expect(logged.join('\n')).not.toMatch(KEY_PATTERN);
    expect(await countKeys(db)).toBe(1);
  });

  it('goes to an owner-only file when the output is not a terminal, replacing a stale one', async () => {
    const file = join(dir, 'nested', 'piped');
    const logged: string[] = [];
    const logger = createLogger('info', (l) => logged.push(l));
    const lines = await firstKeyLines(await emptyDatabase(), { apiUrl, file, logger, terminal: false });
    const key = readFileSync(file, 'utf8').trim();
    expect(key).toMatch(new RegExp(`^${KEY_PATTERN.source}$`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(lines.join('\n')).not.toMatch(KEY_PATTERN);
    expect(lines.join('\n')).toContain(`curl -s -H "Authorization: Bearer $(cat ${file})" ${apiUrl}/domains`);
    expect(logged.some((l) => l.includes(file))).toBe(true);
    expect(logged.join('\n')).not.toContain(key);
    // A later first start on a new database replaces the file with its own key.
    await firstKeyLines(await emptyDatabase(), { apiUrl, file, logger, terminal: false });
    expect(readFileSync(file, 'utf8').trim()).not.toBe(key);
  });

  it('is not issued when the database has a key already', async () => {
    const db = await emptyDatabase();
    await firstKeyLines(db, { apiUrl, file: join(dir, 'once'), logger: createLogger('silent'), terminal: false });
    rmSync(join(dir, 'once'));
    const lines = await firstKeyLines(db, {
      apiUrl,
      file: join(dir, 'once'),
      logger: createLogger('silent'),
      terminal: false,
    });
    expect(lines.join('\n')).toContain('npm run keys -- create');
    expect(existsSync(join(dir, 'once'))).toBe(false);
    expect(await countKeys(db)).toBe(1);
  });

  // A folder that cannot be made, whoever runs the test (root may write anywhere): its parent is a file.
  const unwritable = () => {
    const blocker = join(dir, `blocker-${Math.random().toString(36).slice(2)}`);
    writeFileSync(blocker, '');
    return join(blocker, 'first-api-key');
  };

  it('is not issued where its default file cannot be written: the start goes on, saying how to make a key', async () => {
    const db = await emptyDatabase();
    const logged: string[] = [];
    const file = unwritable();
    const lines = await firstKeyLines(db, {
      apiUrl,
      file,
      logger: createLogger('info', (l) => logged.push(l)),
      terminal: false,
    });
    const text = lines.join('\n');
    expect(text).toContain(`the first key's file ${file} cannot be written`);
    expect(text).toContain('FIRST_KEY_FILE');
    expect(text).toContain('npm run keys -- create --account <name>');
    expect(logged.join('\n')).toMatch(/"level":"warn".*FIRST_KEY_FILE/);
    expect(await countKeys(db)).toBe(0);
  });

  it('fails the start, naming FIRST_KEY_FILE, where the file it names cannot be written; no key is issued', async () => {
    const db = await emptyDatabase();
    const file = unwritable();
    const started = firstKeyLines(db, { apiUrl, file, fileSet: true, logger: createLogger('silent'), terminal: false });
    await expect(started).rejects.toThrow(FirstKeyFileError);
    await expect(started).rejects.toThrow(new RegExp(`^FIRST_KEY_FILE ${file} cannot be written \\(E[A-Z]+: `));
    expect(await countKeys(db)).toBe(0);
  });

  it.each([
    { url: 'sqlite:data/domain-space.sqlite', file: 'data/first-api-key' },
    { url: 'sqlite:/var/lib/dss/db.sqlite', file: '/var/lib/dss/first-api-key' },
    { url: 'postgres://dss@db:5432/dss', file: 'data/first-api-key.pg-db-5432-dss' },
    { url: 'postgres://dss:secret@127.0.0.1/app%20one', file: 'data/first-api-key.pg-127.0.0.1-5432-app_one' },
  ])('defaults to $file for $url', ({ url, file }) => {
    expect(defaultFirstKeyFile(url)).toBe(file);
  });
});
