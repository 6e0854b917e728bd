// Shared steps of the domain tests: store/update calls that may carry fields the typed
// bodies do not allow, and reads of the database to see what a request left behind.
import type { components } from '../../generated/api.js';
import { toIso } from '../../server/db/database.js';
import { clientOf, type Encoding } from '../support/encodings.js';
import type { TestAccount, TestServer } from '../support/server.js';

export type Domain = components['schemas']['domain'];

export const METHODS = ['PUT', 'PATCH'] as const;
export type UpdateMethod = (typeof METHODS)[number];

/** RFC 3339 in UTC with milliseconds, as the spec's timestamp schema describes. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let names = 0;
/** A host name no other test of the file uses, so that uniqueness never gets in the way. */
export const uniqueName = (label = 'site') => `${label}-${++names}.example.com`;

/** POST /domains with any body (also ones the spec forbids, cast past the types). */
export function store(account: TestAccount, encoding: Encoding, body: Record<string, unknown>) {
  return clientOf(account, encoding).POST('/domains', { body: body as never });
}

/** Stores a domain that must be created, and returns it. */
export async function storeOk(account: TestAccount, body: Record<string, unknown> = {}): Promise<Domain> {
  const { data, response } = await store(account, 'form', { name: uniqueName(), ...body });
  if (response.status !== 201 || !data) throw new Error(`store answered ${response.status}`);
  return data.data;
}

/** PUT or PATCH /domains/{id} with any body; `body` undefined sends no body at all. */
export function update(
  account: TestAccount,
  encoding: Encoding,
  method: UpdateMethod,
  id: number,
  body?: Record<string, unknown>,
) {
  const client = clientOf(account, encoding);
  const init = { params: { path: { id } }, ...(body === undefined ? {} : { body: body as never }) };
  return method === 'PUT' ? client.PUT('/domains/{id}', init) : client.PATCH('/domains/{id}', init);
}

/** The stored row, with timestamps as RFC 3339 text whichever engine holds them (pg reads them as Date). */
export async function rowOf(server: TestServer, id: number) {
  const row = await server.db.selectFrom('domains').selectAll().where('id', '=', id).executeTakeFirst();
  return row && { ...row, created_at: toIso(row.created_at), updated_at: toIso(row.updated_at) };
}

export async function countRows(server: TestServer, name?: string): Promise<number> {
  let query = server.db.selectFrom('domains');
  if (name !== undefined) query = query.where('name', '=', name);
  const row = await query.select((eb) => eb.fn.countAll<number | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Moves a domain's timestamps into the past, so a later write that touches them cannot go unnoticed. */
export const PAST = '2020-01-02T03:04:05.678Z';
export async function backdate(server: TestServer, id: number): Promise<void> {
  await server.db.updateTable('domains').set({ created_at: PAST, updated_at: PAST }).where('id', '=', id).execute();
}
