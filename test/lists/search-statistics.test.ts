// With the engine's statistics gathered (ANALYZE, as PostgreSQL's autovacuum does), a search may be read another
// way: on PostgreSQL a search that many names match is counted by walking the account, and one of several words
// asks the trigram index for its rarest word only. Every answer must be what the substring rule gives, with
// the total exact up to FEW_MATCHES and a lower bound past it, on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { crewStem, expectTotal, insertNamed, PAST_FEW_MATCHES, resources } from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

describe.each(resources)('$resource search with statistics gathered', (resource) => {
  let account: TestAccount;
  /** The account's stems, oldest first. */
  const stems = Array.from({ length: PAST_FEW_MATCHES }, (_, i) => crewStem(i));
  const nameOf = (stem: string) => (resource.resource === 'spaces' ? stem : `${stem.replaceAll(' ', '-')}.example`);
  const stemIn = (name: string) => name.replace(/\.example$/, '').replaceAll('-', ' ');

  beforeAll(async () => {
    account = await server.account();
    await insertNamed(server, resource, account, () => stems.map(nameOf));
    // Another account's matches must not show or count.
    const elsewhere = 'elsewhere omega crew 199';
    await resource.store(
      await server.account(),
      resource.resource === 'spaces' ? elsewhere : elsewhere.replaceAll(' ', '-'),
    );
    await sql`analyze`.execute(server.db);
  });

  it.each([
    // Few matches, of a rare word and a word every name holds.
    { search: 'crew 199', exact: true },
    // One name in eight: many matches, fewer than FEW_MATCHES.
    { search: 'omega', exact: true },
    { search: 'omega crew 7', exact: true },
    // Every name: more than FEW_MATCHES, counted up to FEW_MATCHES + 1.
    { search: 'crew', exact: false },
    { search: 'zzz nothing', exact: true },
  ])('search $search answers the substring rule', async ({ search, exact }) => {
    const word = search.replaceAll(' ', resource.resource === 'spaces' ? ' ' : '-');
    const expected = stems.filter((stem) => nameOf(stem).includes(word)).reverse();
    const first = await resource.list(account, { search: word, per_page: 25 });
    expect(first.status).toBe(200);
    expectTotal(first.page?.meta, expected.length, exact);
    expect(first.page?.data.map((r) => stemIn(r.name))).toEqual(expected.slice(0, 25));
    const third = await resource.list(account, { search: word, per_page: 25, page: 3 });
    expect(third.page?.data.map((r) => stemIn(r.name))).toEqual(expected.slice(50, 75));
    const byName = await resource.list(account, { search: word, per_page: 25, sort_by: 'name', sort: 'asc' });
    const names = expected.map(nameOf).sort();
    expect(byName.page?.data.map((r) => r.name)).toEqual(names.slice(0, 25));
  });
});
