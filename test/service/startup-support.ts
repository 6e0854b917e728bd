// What the startup suites share (startup.test.ts, startup-config.test.ts): the entry point started as npm start
// runs it, on new databases of the engine under test, each with a first-key file of its own in a folder of the
// suite's; its banner, URL and first key read back; every process, database and key file gone after the suite.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type Running, runScript, SERVICE, stopAll } from './process.js';

// Each start loads the service (about a second, more on a busy machine; the first one bundles it).
export const SLOW = { timeout: 180_000 };

export interface Started {
  server: Running;
  url: string;
  /** Every line of the start-up message, printed in one go; it ends with a curl line either way. */
  banner: string;
  /** The first key, read from FIRST_KEY_FILE (the same key at every start on the database). */
  key: string;
}

/** Whether the output is the banner alone (the match starts at "listening on", after the service's name). */
export const bannerOnly = (output: string, banner: string) =>
  output.startsWith('domain-space-service listening on') && output.trim().endsWith(banner.trim());

/** A suite's starts: its own key folder and databases (removed after the suite, its processes stopped). */
export function startupSuite() {
  const databases: TestDatabase[] = [];
  const keyDir = mkdtempSync(join(tmpdir(), 'dss-first-key-'));
  /** Where the first start writes the key of each database (the output is a pipe, not a terminal). */
  const keyFiles = new Map<string, string>();
  afterAll(async () => {
    await stopAll();
    await Promise.all(databases.map((d) => d.drop()));
    rmSync(keyDir, { recursive: true, force: true });
  });

  /** A new empty database of the engine under test (SQLite, or PostgreSQL under `npm run test:postgres`). */
  async function newDatabase(): Promise<string> {
    const database = await freshDatabase();
    databases.push(database);
    keyFiles.set(database.url, join(keyDir, `key-${databases.length}`));
    return database.url;
  }
  const envFor = (databaseUrl: string) => ({
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    FIRST_KEY_FILE: keyFiles.get(databaseUrl) as string,
  });

  async function start(databaseUrl: string, env: Record<string, string> = {}): Promise<Started> {
    const server = runScript(SERVICE, [], { ...envFor(databaseUrl), ...env });
    // Generous: on a loaded machine a start can take half a minute.
    const [banner] = await server.waitForOutput(/listening on [\s\S]*curl [^\n]*\n/, 90_000);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(banner)?.[1];
    if (!url) throw new Error(`no URL in:\n${banner}`);
    const file = keyFiles.get(databaseUrl) as string;
    const key = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    return { server, url, banner, key };
  }

  return { keyDir, keyFiles, newDatabase, envFor, start };
}
