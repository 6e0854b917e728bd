// A fresh database for one test file: a SQLite file by default, or a new PostgreSQL database when
// DSS_TEST_DATABASE=postgres (`npm run test:postgres`), created on DSS_TEST_POSTGRES_URL and dropped after; empty,
// or already at the latest schema for an app under test (freshMigratedDatabase).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export const engine = process.env.DSS_TEST_DATABASE === 'postgres' ? 'postgres' : 'sqlite';
export const ADMIN_URL = process.env.DSS_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

let created = 0;

export interface TestDatabase {
  /** A DATABASE_URL for openDatabase, the entry point or the keys command. */
  url: string;
  drop(): Promise<void>;
}

export async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect().catch((error: Error & { code?: string }) => {
    // Said as npm test's preflight says it (test/preflight.ts), not as a bare ECONNREFUSED.
    const { hostname, port } = new URL(ADMIN_URL);
    throw new Error(
      `This suite needs PostgreSQL at ${hostname}:${port} (DSS_TEST_POSTGRES_URL): ${error.code ?? error.message}. ` +
        'Start it (Debian: pg_ctlcluster <version> main start), or set DSS_TEST_POSTGRES_URL.',
      { cause: error },
    );
  });
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A fresh database of the engine under test, or of `kind` for a test that always runs on one engine. */
export async function freshDatabase(kind: 'sqlite' | 'postgres' = engine): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'dss-test-'));
    return {
      url: `sqlite:${join(dir, 'test.sqlite')}`,
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  return freshPostgresDatabase();
}

/**
 * The prefix of the migrated templates a PostgreSQL run copies its apps' databases from: one per test process,
 * named after the run (test/global-setup.ts drops them when the run ends).
 */
export const TEMPLATE_PREFIX = `dss_test_template_${process.env.DSS_TEST_RUN ?? process.pid}_`;
let template: Promise<string> | undefined;
let sqliteTemplate: Promise<Buffer> | undefined;
let copying: Promise<unknown> = Promise.resolve();

/**
 * A fresh database at the latest schema, for an app under test: a copy of a template this process migrated once
 * (`migrate`), the same schema made by the same migrations, since migrating anew cost most of an app's start (on
 * SQLite 0.3-0.7 s of a 0.45-0.66 s start at load 9-10; on PostgreSQL about a second). On SQLite a copy of the
 * closed template file; on PostgreSQL CREATE DATABASE … TEMPLATE. The suites of the migrations themselves start
 * from freshDatabase's empty one.
 */
export async function freshMigratedDatabase(migrate: (url: string) => Promise<void>): Promise<TestDatabase> {
  if (engine === 'sqlite') {
    // Kept as bytes, the template's own file removed at once: nothing is left behind when the process ends.
    sqliteTemplate ??= (async () => {
      const made = await freshDatabase();
      await migrate(made.url);
      const path = made.url.slice('sqlite:'.length);
      // Closed, the database is whole in its file: no write-ahead log left to copy beside it.
      if (existsSync(`${path}-wal`)) throw new Error(`the migrated template ${path} kept its write-ahead log`);
      const bytes = readFileSync(path);
      await made.drop();
      return bytes;
    })();
    const database = await freshDatabase();
    // Owner-only, as the service makes its database file (server/db/private-files.ts).
    writeFileSync(database.url.slice('sqlite:'.length), await sqliteTemplate, { mode: 0o600, flag: 'wx' });
    return database;
  }
  template ??= (async () => {
    const name = `${TEMPLATE_PREFIX}${process.pid}`;
    await admin((client) => client.query(`create database ${name}`));
    await migrate(databaseUrl(name));
    return name;
  })();
  const source = await template;
  const name = `dss_test_${process.pid}_${Date.now()}_${++created}`;
  // One copy at a time: PostgreSQL refuses a copy while another session uses the template.
  const copy = copying.then(() => admin((client) => client.query(`create database ${name} template ${source}`)));
  copying = copy.catch(() => {});
  await copy;
  return {
    url: databaseUrl(name),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A new PostgreSQL database whatever the suite's engine (the PostgreSQL fault tests), dropped by `drop`. */
export async function freshPostgresDatabase(): Promise<TestDatabase & { name: string }> {
  const name = `dss_test_${process.pid}_${Date.now()}_${++created}`;
  await admin((client) => client.query(`create database ${name}`));
  return {
    name,
    url: databaseUrl(name),
    drop: () => admin((client) => client.query(`drop database if exists ${name} with (force)`)).then(() => {}),
  };
}
