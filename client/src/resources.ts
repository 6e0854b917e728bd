// The resource helpers (domains, spaces): one generic implementation over the paths the two resources share,
// typed from the contract's `paths` (generated/api.ts) by the collection path alone, so a path the contract
// lacks, or a body or result of the wrong shape, does not compile. Every helper throws on failure and resolves
// to the record itself; the ETag each record came with is kept beside it, for etagOf().
import type { paths } from '../../generated/api.js';
import { newIdempotencyKey } from './idempotency-key.js';

/** Options every helper takes as its last argument. */
export interface CallOptions {
  /** Aborts this call; it then rejects with the signal's reason (by default a DOMException named AbortError). */
  signal?: AbortSignal;
  /** Overrides the client's timeoutMs for this call (all its attempts and the waits between them). */
  timeoutMs?: number;
}

/** Options of `create`. */
export interface CreateOptions extends CallOptions {
  /**
   * The Idempotency-Key to send: by default a new random one per call (unless the client was made with
   * `idempotencyKeys: false`), which makes the create safe to retry; your own (1–255 printable ASCII characters),
   * e.g. one you keep with a job so that a rerun after a crash does not create twice; or `false` for none.
   */
  idempotencyKey?: string | false;
}

/** Options of `update`, `replace` and `delete`. */
export interface WriteOptions extends CallOptions {
  /**
   * Change the record only if it is still at this version: an ETag from `etagOf(record)` (or `*`). Otherwise
   * the call throws an ApiError with status 412 and nothing changes.
   */
  ifMatch?: string;
}

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Sends one call through the raw client and resolves to the success body (undefined for a 304), or throws. */
export type Send = (
  method: Method,
  path: string,
  init: object,
  options: CallOptions | undefined,
) => Promise<{ data: unknown; response: Response }>;

const etags = new WeakMap<object, string>();

/** The record of a one-record answer (`{ data }`), with its ETag kept for etagOf(). */
export async function recordOf<Item>(sent: ReturnType<Send>): Promise<Item> {
  const { data, response } = await sent;
  const item = (data as { data: Item } | undefined)?.data;
  const etag = response.headers.get('ETag');
  if (item && typeof item === 'object' && etag) etags.set(item, etag);
  return item as Item;
}

/**
 * The ETag of the version of the record that a helper (get, create, update, replace) resolved to: pass it as
 * `ifMatch` to change the record only if nobody else has since, or to `getIfChanged`. Undefined for records
 * from a list, or built by hand.
 */
export function etagOf(record: object): string | undefined {
  return etags.get(record);
}

type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type Form<B> = NonNullable<B> extends { content: { 'application/x-www-form-urlencoded': infer F } } ? F : never;

/**
 * A path of the contract with a paged list (GET, with `meta`) and a create (POST), and an item path
 * `<path>/{id}` below it: a collection of records (domains, spaces).
 */
export type CollectionPath = {
  [P in keyof paths]: paths[P] extends {
    get: { responses: { 200: { content: { 'application/json': { meta: unknown } } } } };
    post: unknown;
  }
    ? `${P}/{id}` extends keyof paths
      ? P
      : never
    : never;
}[keyof paths];

type ItemPath<P extends CollectionPath> = `${P}/{id}` & keyof paths;

/** The record a create answers with (and show, update and list hold). */
export type ItemOf<P extends CollectionPath> = Json<paths[P]['post']['responses'][201]>['data'];
/** One page of the list: `{ data, links, meta }`. */
export type PageOf<P extends CollectionPath> = Json<paths[P]['get']['responses'][200]>;
/** The list's query parameters. */
export type ListParamsOf<P extends CollectionPath> = NonNullable<paths[P]['get']['parameters']['query']>;
/** The body of a create, as the contract documents it (a form). */
export type CreateOf<P extends CollectionPath> = Form<paths[P]['post']['requestBody']>;
/** The body of an update (PATCH and PUT take the same). */
export type UpdateOf<P extends CollectionPath> = Form<paths[ItemPath<P>]['patch']['requestBody']>;

export interface ResourceApi<
  P extends CollectionPath,
  Item = ItemOf<P>,
  ListParams = ListParamsOf<P>,
  Create = CreateOf<P>,
  Update = UpdateOf<P>,
> {
  /** One page: `{ data, links, meta }`. Scope: `<resource>:read` (e.g. `spaces:read`). */
  list(params?: ListParams, options?: CallOptions): Promise<PageOf<P>>;
  /**
   * Every record, fetched lazily one page at a time (100 per page unless `params.per_page` says otherwise) by
   * following the cursor of `links.next` (`after`), whose cost per page does not grow with the depth of the
   * walk; from `params.page` on by page numbers when a later page is given. A `break` stops the fetching. The
   * options apply per page. Scope: `<resource>:read`.
   */
  listAll(params?: ListParams, options?: CallOptions): AsyncGenerator<Item, void, undefined>;
  /** Scope: `<resource>:read`. */
  get(id: number, options?: CallOptions): Promise<Item>;
  /**
   * The record if it changed since the version `etag` names (an ETag, or a record a helper returned), else
   * undefined: the server answered 304 without sending it again. Scope: `<resource>:read`.
   */
  getIfChanged(id: number, etag: string | object, options?: CallOptions): Promise<Item | undefined>;
  /** Sends an Idempotency-Key (see CreateOptions), so it is retried like the other calls. Scope: `<resource>:write`. */
  create(body: Create, options?: CreateOptions): Promise<Item>;
  /** PATCH: changes the fields sent, keeps the others; `null` clears a nullable field. Scope: `<resource>:write`. */
  update(id: number, body: Update, options?: WriteOptions): Promise<Item>;
  /** PUT: the contract gives it the same meaning as PATCH (only the fields sent change). Scope: `<resource>:write`. */
  replace(id: number, body: Update, options?: WriteOptions): Promise<Item>;
  /** Scope: `<resource>:write`. */
  delete(id: number, options?: WriteOptions): Promise<void>;
}

/** The path parameter of an item operation, with the request's headers. */
export const byId = (id: number, headers: Record<string, string> = {}) => ({ params: { path: { id } }, headers });

/** The `If-Match` header of a write, when the caller gave one. */
export const ifMatch = (options?: WriteOptions): Record<string, string> =>
  options?.ifMatch === undefined ? {} : { 'If-Match': options.ifMatch };

/**
 * Walks a cursor-paged list (`{ data, links: { next } }`) by its `after` parameter. Each page costs the server the
 * same however deep the walk, and a record created or deleted meanwhile neither repeats nor skips another. It stops
 * at the end, and also when the answer does not move on (a mock's fixed example): a misbehaving server must not
 * make it loop forever.
 */
export async function* byCursor<Item>(
  page: (after: string | undefined) => Promise<{ data: Item[]; links: { next: string | null } }>,
  first: string | undefined,
): AsyncGenerator<Item, void, undefined> {
  let after = first;
  for (;;) {
    const result = await page(after);
    yield* result.data;
    const next =
      result.links.next === null ? null : new URL(result.links.next, 'http://base').searchParams.get('after');
    if (result.data.length === 0 || next === null || next === after) return;
    after = next;
  }
}

export function resourceApi<P extends CollectionPath>(
  send: Send,
  collectionPath: P,
  { idempotencyKeys }: { idempotencyKeys: boolean },
): ResourceApi<P> {
  type Item = ItemOf<P>;
  type Page = PageOf<P>;
  type ListParams = ListParamsOf<P>;
  // CollectionPath admits only paths whose item path the contract has.
  const itemPath = `${collectionPath}/{id}`;
  const record = (sent: ReturnType<Send>) => recordOf<Item>(sent);

  const list = async (params?: ListParams, options?: CallOptions) =>
    (await send('GET', collectionPath, { params: { query: params ?? {} } }, options)).data as Page;

  /** From a page number on, page after page (when the caller asked for a page other than the first). */
  async function* byPage(query: ListParams, first: number, options: CallOptions | undefined) {
    let page = first;
    for (;;) {
      const result = await list({ ...query, page }, options);
      yield* result.data;
      const { current_page, last_page } = result.meta;
      // Stop on the last page, and also when the answer is not the page asked for (a mock's fixed example).
      if (result.data.length === 0 || result.links.next === null) return;
      if (current_page !== page || current_page >= last_page) return;
      page += 1;
    }
  }

  return {
    list,
    async *listAll(params, options) {
      const query = { ...params, per_page: params?.per_page ?? 100 } as ListParams;
      if (query.page !== undefined && query.page > 1) {
        yield* byPage(query, query.page, options);
        return;
      }
      const { page: _page, ...rest } = query;
      yield* byCursor<Item>((after) => list({ ...rest, after: after ?? '' } as ListParams, options), query.after ?? '');
    },
    get: (id, options) => record(send('GET', itemPath, byId(id), options)),
    async getIfChanged(id, etag, options) {
      const tag = typeof etag === 'string' ? etag : etagOf(etag);
      if (tag === undefined) throw new TypeError('getIfChanged: this record came with no ETag; pass an ETag string');
      return record(send('GET', itemPath, byId(id, { 'If-None-Match': tag }), options));
    },
    create(body, options) {
      const key = options?.idempotencyKey ?? (idempotencyKeys ? newIdempotencyKey() : false);
      const headers = key === false ? {} : { 'Idempotency-Key': key };
      return record(send('POST', collectionPath, { body, headers }, options));
    },
    update: (id, body, options) => record(send('PATCH', itemPath, { ...byId(id, ifMatch(options)), body }, options)),
    replace: (id, body, options) => record(send('PUT', itemPath, { ...byId(id, ifMatch(options)), body }, options)),
    async delete(id, options) {
      await send('DELETE', itemPath, byId(id, ifMatch(options)), options);
    },
  };
}
