// Domains and spaces behind one shape, so that every list test runs over both resources.
import { expect } from 'vitest';
import type { components, operations } from '../../generated/api.js';
import { FEW_MATCHES, foldText, SCANNED_ACCOUNT_SIZE } from '../../server/db/listing.js';
import type { TestAccount, TestServer } from '../support/server.js';

export type ListParams = NonNullable<operations['spaces_list']['parameters']['query']>;
export type Page = {
  data: Array<{ id: number; name: string }>;
  links: components['schemas']['pagination-links'];
  meta: components['schemas']['pagination-meta'];
};
export type Problem = components['schemas']['problem'];

export interface Listed {
  id: number;
  /** The name as the service stored it. */
  name: string;
}

export interface ListedResource {
  resource: 'domains' | 'spaces';
  /** The list's path as links carry it. */
  path: string;
  /** Stores a record named after `stem`: a space is named `stem`, a domain `stem.example`. */
  store(account: TestAccount, stem: string): Promise<Listed>;
  list(account: TestAccount, params?: ListParams): Promise<{ status: number; page: Page | undefined }>;
}

function stored(what: string, data: { data: Listed } | undefined, status: number): Listed {
  if (!data) throw new Error(`could not store ${what}: ${status}`);
  return { id: data.data.id, name: data.data.name };
}

export const resources: ListedResource[] = [
  {
    resource: 'domains',
    path: '/api/v1/domains',
    async store(account, stem) {
      const { data, response } = await account.client.POST('/domains', { body: { name: `${stem}.example` } });
      return stored(`domain ${stem}.example`, data, response.status);
    },
    async list(account, params = {}) {
      const { data, response } = await account.client.GET('/domains', { params: { query: params } });
      return { status: response.status, page: data };
    },
  },
  {
    resource: 'spaces',
    path: '/api/v1/spaces',
    async store(account, stem) {
      const { data, response } = await account.client.POST('/spaces', { body: { name: stem } });
      return stored(`space ${stem}`, data, response.status);
    },
    async list(account, params = {}) {
      const { data, response } = await account.client.GET('/spaces', { params: { query: params } });
      return { status: response.status, page: data };
    },
  },
];

/** Stores one record per stem, in order, so ids rise with the position in `stems`. */
export async function storeAll(resource: ListedResource, account: TestAccount, stems: string[]): Promise<Listed[]> {
  const records: Listed[] = [];
  for (const stem of stems) records.push(await resource.store(account, stem));
  return records;
}

/** A raw GET of a path with its query (as links give it), for requests the typed client cannot make. */
export async function getRaw(
  server: TestServer,
  account: TestAccount,
  pathAndQuery: string,
): Promise<{ status: number; body: Page & Problem }> {
  const response = await server.fetch(pathAndQuery, { headers: { Authorization: `Bearer ${account.key}` } });
  return { status: response.status, body: await response.json() };
}

export const ids = (records: Array<{ id: number }> | undefined) => (records ?? []).map((r) => r.id);

/**
 * Adds records straight into the database (not through the API: faster for the thousands a test of the counts
 * needs), named by `namesOf(accountId)` as the service would store them, in batches of 1,000, ids rising in order.
 */
export async function insertNamed(
  server: TestServer,
  resource: ListedResource,
  account: TestAccount,
  namesOf: (accountId: number) => string[],
): Promise<void> {
  const { db } = server;
  const { id } = await db
    .selectFrom('accounts')
    .select('id')
    .where('name', '=', account.name)
    .executeTakeFirstOrThrow();
  const names = namesOf(id);
  const now = new Date().toISOString();
  for (let start = 0; start < names.length; start += 1_000) {
    const rows = names.slice(start, start + 1_000).map((name) => {
      const common = { account_id: id, name, name_key: foldText(name), created_at: now, updated_at: now };
      return resource.resource === 'spaces'
        ? { ...common, color: 1 }
        : { ...common, index_page: null, not_found_page: null };
    });
    await db
      .insertInto(resource.resource)
      .values(rows as never)
      .execute();
  }
}

/**
 * Adds records named `filler-<account>-<n>` (which no search of the list tests finds) straight into the database until
 * the account holds more than SCANNED_ACCOUNT_SIZE of them, so that its searches go through the trigram index.
 */
export async function pastScanSize(server: TestServer, resource: ListedResource, account: TestAccount): Promise<void> {
  const held = await server.db
    .selectFrom(resource.resource)
    .innerJoin('accounts', 'accounts.id', `${resource.resource}.account_id`)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('accounts.name', '=', account.name)
    .executeTakeFirstOrThrow();
  const missing = SCANNED_ACCOUNT_SIZE + 1 - Number(held.n);
  await insertNamed(server, resource, account, (id) =>
    Array.from({ length: Math.max(0, missing) }, (_, i) => `filler-${id}-${i}`),
  );
}

const GREEK = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'omega'];
/** An account size past FEW_MATCHES, for the lists whose totals stop there. */
export const PAST_FEW_MATCHES = FEW_MATCHES + 200;
/** Record i's stem in such an account: every one holds "crew", one in eight "omega", eleven of 5,200 "crew 199". */
export const crewStem = (i: number) => `${GREEK[i % GREEK.length]} crew ${i}`;

/**
 * A page's total for `count` matching records: exact (and no `total_exact`), or, past FEW_MATCHES, a lower bound
 * above FEW_MATCHES with `total_exact: false`.
 */
export function expectTotal(meta: Page['meta'] | undefined, count: number, exact: boolean): void {
  if (exact) {
    expect(meta?.total).toBe(count);
    expect(meta?.total_exact).toBeUndefined();
  } else {
    expect(meta?.total_exact).toBe(false);
    expect(meta?.total).toBeGreaterThan(FEW_MATCHES);
    expect(meta?.total).toBeLessThanOrEqual(count);
  }
}
