// Starts the real app on port 0 with a real database of its own (a SQLite file, or PostgreSQL under
// `npm run test:postgres`), and makes accounts with typed clients for it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import createClient, { type Client, type Middleware } from 'openapi-fetch';
// The client library's form encoding: undefined fields left out, null sent as an empty value.
import { formBody } from '../../client/src/form-body.js';
import type { paths } from '../../generated/api.js';
import { issueKey } from '../../server/accounts/keys.js';
import { type AppDeps, createApp, FORMATS } from '../../server/app.js';
import { backgroundJobs } from '../../server/background.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { wakeupsOf } from '../../server/db/wakeups.js';
import { DEFAULT_SCHEDULE } from '../../server/domains/check-rules.js';
import { DEFAULT_VERIFY_QUOTA, type DomainChecks } from '../../server/domains/checks.js';
import { txtLookup } from '../../server/domains/txt-lookup.js';
import { prepareValidation, type RequestValidation } from '../../server/http/validation/request-validation.js';
import { startJobs } from '../../server/jobs/runner.js';
import { createLogger } from '../../server/logger.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../../server/webhooks/settings.js';
import { checkResponse, routes, spec } from './contract.js';
import { engine, freshDatabase, type TestDatabase } from './database.js';

export type ApiClient = Client<paths>;

export interface TestAccount {
  name: string;
  key: string;
  /** Sends bodies as application/x-www-form-urlencoded, the documented encoding. */
  client: ApiClient;
  /** Sends bodies as application/json. */
  json: ApiClient;
}

export interface TestServer {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  /** origin + /api/v1 */
  apiUrl: string;
  db: Database;
  /** The DATABASE_URL of this server's database (SQLite file or PostgreSQL), for other processes to share. */
  databaseUrl: string;
  /** The webhook settings the app and its jobs were given. */
  webhooks: WebhookSettings;
  /** Issues a key for a new (or existing) account. */
  account(name?: string): Promise<TestAccount>;
  /** A raw request to a path of the origin; the response is checked against the spec like the client's. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

const contractCheck: Middleware = {
  async onResponse({ request, response }) {
    await checkResponse(request.method, request.url, response);
    return response;
  },
};

export function apiClient(apiUrl: string, key: string, encoding: 'form' | 'json' = 'form'): ApiClient {
  const client = createClient<paths>({
    baseUrl: apiUrl,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(encoding === 'form' ? { 'Content-Type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(encoding === 'form' ? { bodySerializer: formBody } : {}),
  });
  client.use(contractCheck);
  return client;
}

let accounts = 0;

/**
 * One validation of the bundled spec (with every response checked too) for the apps this process's tests start,
 * as the service's warm-up and serving app share one: each app compiling the same schemas again would only cost
 * time.
 */
let validation: RequestValidation | undefined;
export const sharedValidation = () => {
  validation ??= prepareValidation(spec, routes, FORMATS, { validateResponses: true });
  return validation;
};

/**
 * Domain checks that never leave the machine: lookups go to a closed port on 127.0.0.1 and fail at once
 * (`lookup_failed`). The DNS tests (test/dns/) start a real DNS server and pass their own.
 */
export function offlineDomainChecks(): DomainChecks {
  const lookup = txtLookup({ servers: ['127.0.0.1:9'], timeoutMs: 200, tries: 1 });
  return { schedule: DEFAULT_SCHEDULE, lookup, verifyQuota: DEFAULT_VERIFY_QUOTA, sandbox: false };
}

/**
 * A SQLite database with every migration applied, made once per process and kept as bytes: each app's database
 * starts as a copy of it (the same state the migrations leave, as the service's start reaches it) rather than
 * running the migrations again, which cost most of an app's start. The migrations themselves are tested in test/db/.
 */
let migratedSqlite: Promise<Buffer> | undefined;
function migratedSqliteBytes(): Promise<Buffer> {
  migratedSqlite ??= (async () => {
    const template = await freshDatabase('sqlite');
    const db = openDatabase(template.url);
    await migrateToLatest(db);
    await db.destroy();
    const path = template.url.slice('sqlite:'.length);
    // Closed, the database is whole in its file: no write-ahead log left to copy beside it.
    if (existsSync(`${path}-wal`)) throw new Error(`the migrated template ${path} kept its write-ahead log`);
    const bytes = readFileSync(path);
    await template.drop();
    return bytes;
  })();
  return migratedSqlite;
}

/** A fresh database of the engine under test, migrated to the latest schema. */
async function migratedDatabase(): Promise<{ database: TestDatabase; db: Database }> {
  const database = await freshDatabase();
  if (engine === 'sqlite') {
    // Owner-only, as the service makes its database file (server/db/private-files.ts).
    writeFileSync(database.url.slice('sqlite:'.length), await migratedSqliteBytes(), { mode: 0o600, flag: 'wx' });
  }
  const db = openDatabase(database.url);
  // On a copy of the template, this finds every migration applied and runs none.
  await migrateToLatest(db);
  return { database, db };
}

export async function startServer(
  options: Partial<
    Pick<
      AppDeps,
      | 'spec'
      | 'corsOrigins'
      | 'docsFile'
      | 'docsSandboxKey'
      | 'isDraining'
      | 'logger'
      | 'metrics'
      | 'metricsToken'
      | 'rateLimit'
      | 'trustProxy'
      | 'domainChecks'
    >
  > & {
    /** Webhook settings over the defaults; private targets are allowed (the tests' receivers are on 127.0.0.1). */
    webhooks?: Partial<WebhookSettings>;
    /** Run a delivery worker beside the app, as the service does. */
    deliver?: boolean;
  } = {},
): Promise<TestServer> {
  const { database, db } = await migratedDatabase();
  const { webhooks: webhookOptions, deliver = false, ...appOptions } = options;
  // The conformance runner makes many endpoints in one account: the per-account limit is tested where it is set.
  const webhooks: WebhookSettings = {
    ...DEFAULT_WEBHOOK_SETTINGS,
    allowPrivateTargets: true,
    maxEndpoints: 1000,
    ...webhookOptions,
  };
  const app = await createApp({
    db,
    validateResponses: true,
    domainChecks: offlineDomainChecks(),
    webhooks,
    ...(options.spec ? {} : { validation: sharedValidation() }),
    ...appOptions,
  });
  // The service's own runner and jobs (server/jobs/); scheduled checks are started by the suites that want them.
  const worker = deliver
    ? startJobs(
        backgroundJobs(db, {
          webhooks,
          domainChecks: appOptions.domainChecks ?? offlineDomainChecks(),
          logger: createLogger('silent'),
        }),
        {
          db,
          wakeups: wakeupsOf(db),
          logger: createLogger('silent'),
        },
      )
    : undefined;
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const apiUrl = `${origin}/api/v1`;

  return {
    origin,
    apiUrl,
    db,
    webhooks,
    databaseUrl: database.url,
    async account(name = `account-${++accounts}`) {
      const { key } = await issueKey(db, name);
      return { name, key, client: apiClient(apiUrl, key, 'form'), json: apiClient(apiUrl, key, 'json') };
    },
    async fetch(path, init = {}) {
      const response = await fetch(`${origin}${path}`, init);
      await checkResponse(init.method ?? 'GET', `${origin}${path}`, response);
      return response;
    },
    async close() {
      await worker?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await db.destroy();
      await database.drop();
    },
  };
}
