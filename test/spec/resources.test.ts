// The registry (server/resources.ts) against the spec and everything derived from it: a collection the spec
// serves that is not registered, or a registered resource that something forgot (its handlers, its migration's
// table and counts, the sandbox's records, the formats the conformance runner generates, the client's helpers),
// fails here by name.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { FORMATS as RUNNER_FORMATS } from '../../scripts/conformance/formats.js';
import { FORMATS as SERVER_FORMATS } from '../../server/app.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { defaultDomainChecks } from '../../server/domains/checks.js';
import { DEFAULT_EVENT_SETTINGS } from '../../server/events/settings.js';
import { MODULE_NAMES, MODULES, RESOURCE_NAMES, RESOURCES } from '../../server/resources.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { webhookRedelivery } from '../../server/webhooks/redelivery.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

const document = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8')) as {
  paths: Record<string, Record<string, { operationId?: string }>>;
};
const specCollections = [...new Set(Object.keys(document.paths).map((path) => path.split('/')[1] as string))];
const specOperations = Object.values(document.paths).flatMap((item) =>
  Object.values(item).flatMap((operation) => (operation.operationId ? [operation.operationId] : [])),
);
// The formats JSON Schema and OpenAPI define themselves (ajv-formats and the validator know them).
const STANDARD_FORMATS = new Set(['int32', 'int64', 'date-time', 'uri-reference', 'uri', 'email']);
const customFormats = [
  ...new Set([...JSON.stringify(document).matchAll(/"format":"([^"]+)"/g)].map((match) => match[1] as string)),
].filter((format) => !STANDARD_FORMATS.has(format));

describe('the registry', () => {
  it('registers every collection of the spec, and nothing else', () => {
    expect([...MODULE_NAMES].sort()).toEqual([...specCollections].sort());
  });

  it.each(MODULES.map((module) => ({ name: module.name, module })))(
    '$name handles exactly its operations of the spec (HEAD is served by GET)',
    ({ name, module }) => {
      // Building the handlers touches no database: the repositories only use it once called.
      const services = {
        domainChecks: defaultDomainChecks(),
        webhooks: DEFAULT_WEBHOOK_SETTINGS,
        events: DEFAULT_EVENT_SETTINGS,
        fanOut: webhookFanOut(DEFAULT_WEBHOOK_SETTINGS),
        redeliverEvent: webhookRedelivery(DEFAULT_WEBHOOK_SETTINGS),
      };
      const handled = Object.keys(module.handlers({} as Database, services)).sort();
      const own = specOperations.filter((id) => id.startsWith(`${name}_`) && !id.endsWith('_head')).sort();
      expect(handled).toEqual(own);
    },
  );

  it('knows a rule for every custom format of the spec, in the server and in the conformance runner', () => {
    expect(customFormats.length).toBeGreaterThan(0);
    expect(customFormats.filter((format) => !(format in SERVER_FORMATS))).toEqual([]);
    expect(customFormats.filter((format) => !(format in RUNNER_FORMATS))).toEqual([]);
  });

  it("gives the client a helper for every resource (the client's own list, checked by its compiler)", () => {
    const api = createClient({ baseUrl: 'http://127.0.0.1:9/api/v1', apiKey: 'dss_unused_key' });
    const helpers = RESOURCE_NAMES.filter(
      (name) => typeof (api as unknown as Record<string, unknown>)[name] === 'object',
    );
    expect(helpers).toEqual(RESOURCE_NAMES);
  });
});

describe("every registered resource's migration", () => {
  let database: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await freshDatabase();
    db = openDatabase(database.url);
    await migrateToLatest(db);
  });
  afterAll(async () => {
    await db.destroy();
    await database.drop();
  });

  it('creates its table', async () => {
    const tables = (await db.introspection.getTables()).map((table) => table.name);
    expect(RESOURCE_NAMES.filter((name) => !tables.includes(name))).toEqual([]);
  });

  it("counts its records (migration 0004's counters) and seeds a sandbox account with some", async () => {
    const account = await db
      .insertInto('accounts')
      .values({ name: 'registry', created_at: new Date().toISOString() })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const module of RESOURCES) await module.seed(db, Number(account.id), 'registry');
    const counts = await db
      .selectFrom('record_counts')
      .select(['resource', 'total'])
      .where('account_id', '=', account.id)
      .execute();
    const counted = Object.fromEntries(counts.map((row) => [row.resource, Number(row.total)]));
    for (const name of RESOURCE_NAMES) {
      const stored = await db
        .selectFrom(name)
        .select((eb) => eb.fn.countAll().as('n'))
        .where('account_id', '=', account.id)
        .executeTakeFirstOrThrow();
      expect({ name, stored: Number(stored.n) }).not.toEqual({ name, stored: 0 });
      expect({ name, counted: counted[name] }).toEqual({ name, counted: Number(stored.n) });
    }
  });
});
