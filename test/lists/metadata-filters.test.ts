// A list filtered by metadata on an account larger than FEW_MATCHES, with the engine's statistics gathered
// (ANALYZE, as PostgreSQL's autovacuum does): the matches are found from the index of the pair the fewest records
// hold, each tested by its record (listing.ts pairsFirst), and past FEW_MATCHES the page is read by walking the account.
// Every answer must be what the filters give, with the total exact up to FEW_MATCHES and a lower bound past it, in
// id and name order, by page number and by cursor, and never another account's records, on both engines.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index.js';
import { foldText } from '../../server/db/listing.js';
import { serializeMetadata } from '../../server/metadata/rules.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import {
  crewStem,
  expectTotal,
  type ListedResource,
  type ListParams,
  PAST_FEW_MATCHES,
  type Page,
  resources,
} from './fixtures.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Record i's metadata: every record `kind: all`; one in 97 `tier: gold`; alternately `shade: even` and `odd`. */
const metadataOf = (i: number) => ({
  kind: 'all',
  tier: i % 97 === 0 ? 'gold' : 'plain',
  shade: i % 2 === 0 ? 'even' : 'odd',
});

/** Records with metadata and their pairs, straight into the database: `count` of them, oldest first. */
async function insertWithMetadata(resource: ListedResource, account: TestAccount, names: string[]) {
  const { db } = server;
  const { id: accountId } = await db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', account.name)
    .executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  for (let start = 0; start < names.length; start += 500) {
    const batch = names.slice(start, start + 500).map((name, j) => ({ name, metadata: metadataOf(start + j) }));
    const rows = batch.map(({ name, metadata }) => {
      const common = {
        account_id: accountId,
        name,
        name_key: foldText(name),
        created_at: now,
        updated_at: now,
        metadata: serializeMetadata(metadata),
      };
      return resource.resource === 'spaces'
        ? { ...common, color: 1 }
        : { ...common, index_page: null, not_found_page: null };
    });
    const inserted = await db
      .insertInto(resource.resource)
      .values(rows as never)
      .returning('id')
      .execute();
    const pairs = inserted.flatMap((row, j) =>
      Object.entries(batch[j]?.metadata ?? {}).map(([key, value]) => ({
        record_id: Number(row.id),
        account_id: accountId,
        key,
        value,
      })),
    );
    await db
      .insertInto(`${resource.resource}_metadata`)
      .values(pairs as never)
      .execute();
  }
}

describe.each(resources)('$resource filtered by metadata, past FEW_MATCHES, with statistics gathered', (resource) => {
  let account: TestAccount;
  const nameOf = (stem: string) => (resource.resource === 'spaces' ? stem : `${stem.replaceAll(' ', '-')}.example`);
  const names = Array.from({ length: PAST_FEW_MATCHES }, (_, i) => nameOf(crewStem(i)));

  beforeAll(async () => {
    account = await server.account();
    await insertWithMetadata(resource, account, names);
    // Another account's records hold the same pairs and must neither show nor count.
    await insertWithMetadata(resource, await server.account(), [
      nameOf('omega crew elsewhere'),
      nameOf('alpha crew elsewhere'),
    ]);
    await sql`analyze`.execute(server.db);
  });

  const word = (search: string) => search.replaceAll(' ', resource.resource === 'spaces' ? ' ' : '-');
  it.each<{ label: string; metadata: Record<string, string>; search?: string; exact: boolean }>([
    { label: 'a pair every record holds', metadata: { kind: 'all' }, exact: false },
    { label: 'a pair few records hold', metadata: { tier: 'gold' }, exact: true },
    { label: 'two pairs, few matches', metadata: { tier: 'gold', shade: 'even' }, exact: true },
    { label: 'two pairs, half the records', metadata: { kind: 'all', shade: 'odd' }, exact: true },
    { label: 'two pairs, the rarer second', metadata: { kind: 'all', tier: 'gold' }, exact: true },
    { label: 'two pairs, one held by no record', metadata: { kind: 'all', tier: 'silver' }, exact: true },
    { label: 'three pairs', metadata: { shade: 'odd', kind: 'all', tier: 'gold' }, exact: true },
    { label: 'a pair with a search', metadata: { kind: 'all' }, search: 'omega', exact: true },
    { label: 'a pair with a search that nothing matches', metadata: { tier: 'gold' }, search: 'zzz', exact: true },
    { label: 'a pair no record holds', metadata: { tier: 'silver' }, exact: true },
  ])('$label answers the filters', async ({ metadata, search, exact }) => {
    const expected = names
      .map((name, i) => ({ name, i }))
      .filter(({ i }) =>
        Object.entries(metadata).every(([key, value]) => (metadataOf(i) as Record<string, string>)[key] === value),
      )
      .filter(({ name }) => search === undefined || name.includes(word(search)))
      .map(({ name }) => name);
    const newestFirst = [...expected].reverse();
    const params = { metadata, ...(search ? { search: word(search) } : {}), per_page: 25 } as ListParams;

    const first = await resource.list(account, params);
    expect(first.status).toBe(200);
    expectTotal(first.page?.meta, expected.length, exact);
    expect(first.page?.data.map((r) => r.name)).toEqual(newestFirst.slice(0, 25));
    const third = await resource.list(account, { ...params, page: 3 });
    expect(third.page?.data.map((r) => r.name)).toEqual(newestFirst.slice(50, 75));
    const byName = await resource.list(account, { ...params, sort_by: 'name', sort: 'asc' });
    expect(byName.page?.data.map((r) => r.name)).toEqual([...expected].sort().slice(0, 25));
    // A cursor walk: its first two pages.
    const walk = await resource.list(account, { ...params, after: '' });
    expect(walk.page?.data.map((r) => r.name)).toEqual(newestFirst.slice(0, 25));
    const next = walk.page?.links.next;
    if (expected.length > 25) {
      const after = new URL(String(next), 'http://x').searchParams.get('after') ?? '';
      const second = await resource.list(account, { ...params, after });
      expect(second.page?.data.map((r) => r.name)).toEqual(newestFirst.slice(25, 50));
    } else {
      expect(next ?? null).toBeNull();
    }
  });
  it.each<{ label: string; metadata: Record<string, string> }>([
    { label: 'a pair every record holds (past FEW_MATCHES)', metadata: { kind: 'all' } },
    { label: 'two pairs, half the records', metadata: { kind: 'all', shade: 'odd' } },
  ])('$label is read to its end through links.next and through listAll', async ({ metadata }) => {
    const expected = names
      .filter((_, i) =>
        Object.entries(metadata).every(([key, value]) => (metadataOf(i) as Record<string, string>)[key] === value),
      )
      .reverse();
    const walked: string[] = [];
    const first = await resource.list(account, { metadata, per_page: 100, after: '' } as ListParams);
    walked.push(...(first.page?.data.map((r) => r.name) ?? []));
    let next = first.page?.links.next;
    while (next) {
      const response = await fetch(new URL(next, server.apiUrl), {
        headers: { Authorization: `Bearer ${account.key}` },
      });
      expect(response.status).toBe(200);
      const page = (await response.json()) as Page;
      walked.push(...page.data.map((r) => r.name));
      next = page.links.next;
    }
    expect(walked).toEqual(expected);
    const api = createClient({ baseUrl: server.apiUrl, apiKey: account.key });
    const listed: string[] = [];
    const query = { metadata, per_page: 100 as const };
    for await (const record of resource.resource === 'spaces'
      ? api.spaces.listAll(query)
      : api.domains.listAll(query)) {
      listed.push(record.name);
    }
    expect(listed).toEqual(expected);
  });
});
