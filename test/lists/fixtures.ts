// Domains and spaces behind one shape, so that every list test runs over both resources.
import type { components, operations } from '../../generated/api.js';
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
