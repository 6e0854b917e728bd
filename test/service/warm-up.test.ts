// The start's warm-up (server/warm-up.ts): before the service listens, each kind of request reaches what it is sent
// to prepare (express-openapi-validator compiles an operation's schemas per media type on the first request that
// gets that far), on the serving database, which it leaves as it found it. The first real request of each kind
// then costs what later ones do (test/http/adversarial-input.test.ts measures a started service's CPU per request).

import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../../server/app.js';
import { routeTable } from '../../server/http/routing/routes.js';
import { prepareValidation } from '../../server/http/validation/request-validation.js';
import { type WarmUpAnswer, warmUp } from '../../server/warm-up.js';
import { spec } from '../support/contract.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;
let answers: WarmUpAnswer[];
let before: Record<string, number>;

/** Rows per table of the database: what the warm-up must leave as it found it. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = await server.db.introspection.getTables();
  const counts: Record<string, number> = {};
  for (const { name } of tables) {
    const { rows } = await sql<{ n: number | string }>`select count(*) as n from ${sql.table(name)}`.execute(server.db);
    counts[name] = Number(rows[0]?.n);
  }
  return counts;
}

beforeAll(async () => {
  server = await startServer();
  // Records the warm-up could reach if it were an account: one of each, with the id 1 its requests name.
  const { client } = await server.account('owner');
  expect((await client.POST('/spaces', { body: { name: 'kept' } })).response.status).toBe(201);
  expect((await client.POST('/domains', { body: { name: 'kept.example.com' } })).response.status).toBe(201);
  before = await rowCounts();
  answers = await warmUp({ db: server.db, spec, validation: prepareValidation(spec, routeTable(spec), FORMATS) });
  // Compiling every operation's schemas takes seconds on a loaded machine.
}, 180_000);

afterAll(() => server?.close());

const sentTo = (method: string, template: string) => {
  const path = `${spec.basePath}${template.replace(/\{[^{}/]+\}/g, '1')}`;
  return answers.filter((answer) => answer.method === method && answer.path === path);
};

describe('the warm-up before the service listens', () => {
  it('sends every operation a body of each media type it accepts, refused by its validation (422)', () => {
    const missing: string[] = [];
    for (const route of routeTable(spec).routes) {
      for (const mediaType of Object.keys(route.bodies)) {
        const answer = sentTo(route.method, route.template).find((a) => a.contentType === mediaType);
        if (answer?.status !== 422) missing.push(`${route.method} ${route.template} ${mediaType}: ${answer?.status}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('reaches every operation past authentication and its scope, and none fails', () => {
    for (const route of routeTable(spec).routes) expect(sentTo(route.method, route.template)).not.toEqual([]);
    // The API's requests (the pages outside it answer as they can: /docs is a 503 where no page is built).
    const api = answers.filter((a) => a.path.startsWith(`${spec.basePath}/`));
    const refused = api.filter((a) => [401, 403, 415].includes(a.status) || a.status >= 500);
    expect(refused).toEqual([]);
  });

  it('leaves the serving database as it found it', async () => {
    expect(await rowCounts()).toEqual(before);
  });
});
