// The resource helpers (domains, spaces): one generic implementation over the paths the two resources share,
// typed per resource by the generated types. Every helper throws on failure and resolves to the record itself.
import type { PaginationLinks, PaginationMeta } from './types.js';

/** Options every helper takes as its last argument. */
export interface CallOptions {
  /** Aborts this call; it then rejects with the signal's reason (by default a DOMException named AbortError). */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call (all its attempts and the waits between them). */
  timeoutMs?: number;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Sends one call through the raw client and resolves to the success body, or throws. */
export type Send = (method: Method, path: string, init: object, options: CallOptions | undefined) => Promise<unknown>;

interface Collection<Item> {
  data: Item[];
  links: PaginationLinks;
  meta: PaginationMeta;
}

interface ListQuery {
  page?: number;
  per_page?: PaginationMeta['per_page'];
}

export interface ResourceApi<Item, Page extends Collection<Item>, ListParams extends ListQuery, Create, Update> {
  /** One page: `{ data, links, meta }`. */
  list(params?: ListParams, options?: CallOptions): Promise<Page>;
  /**
   * Every record from `params.page` (default 1) to the last page, fetched lazily one page at a time (100 per
   * page unless `params.per_page` says otherwise); a `break` stops the fetching. The options apply per page.
   */
  listAll(params?: ListParams, options?: CallOptions): AsyncGenerator<Item, void, undefined>;
  get(id: number, options?: CallOptions): Promise<Item>;
  create(body: Create, options?: CallOptions): Promise<Item>;
  /** PATCH: changes the fields sent, keeps the others; `null` clears a nullable field. */
  update(id: number, body: Update, options?: CallOptions): Promise<Item>;
  /** PUT: the contract gives it the same meaning as PATCH (only the fields sent change). */
  replace(id: number, body: Update, options?: CallOptions): Promise<Item>;
  delete(id: number, options?: CallOptions): Promise<void>;
}

export function resourceApi<Item, Page extends Collection<Item>, ListParams extends ListQuery, Create, Update>(
  send: Send,
  collectionPath: string,
): ResourceApi<Item, Page, ListParams, Create, Update> {
  const itemPath = `${collectionPath}/{id}`;
  const byId = (id: number) => ({ params: { path: { id } } });
  const record = async (sent: Promise<unknown>) => ((await sent) as { data: Item }).data;

  const list = async (params?: ListParams, options?: CallOptions) =>
    (await send('GET', collectionPath, { params: { query: params ?? {} } }, options)) as Page;

  return {
    list,
    async *listAll(params, options) {
      const query = { ...params, per_page: params?.per_page ?? 100 } as ListParams;
      let page = params?.page ?? 1;
      for (;;) {
        const result = await list({ ...query, page }, options);
        yield* result.data;
        const { current_page, last_page } = result.meta;
        // Stop on the last page, and also when the answer is not the page asked for (a mock's fixed example):
        // a misbehaving server must not make this loop forever.
        if (result.data.length === 0 || result.links.next === null) return;
        if (current_page !== page || current_page >= last_page) return;
        page += 1;
      }
    },
    get: (id, options) => record(send('GET', itemPath, byId(id), options)),
    create: (body, options) => record(send('POST', collectionPath, { body }, options)),
    update: (id, body, options) => record(send('PATCH', itemPath, { ...byId(id), body }, options)),
    replace: (id, body, options) => record(send('PUT', itemPath, { ...byId(id), body }, options)),
    async delete(id, options) {
      await send('DELETE', itemPath, byId(id), options);
    },
  };
}
