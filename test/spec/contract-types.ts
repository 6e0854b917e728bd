// Compile-time checks of the contract, run by `npm run typecheck` (not by vitest): each ts-
// expect-error line below must fail to compile, so the handler types really do hold handlers to the spec.
import type { Handler, Handlers } from '../../server/http/routing/operations.js';

declare const handlers: Handlers;
const record = {
  id: 1,
  name: 'shop.example.com',
  index_page: null,
  not_found_page: null,
  status: 'pending' as const,
  verification: { type: 'txt' as const, name: '_dss-challenge.shop.example.com', value: 'dss-verify=x' },
  kind: 'subdomain' as const,
  dns_records: [],
  routing: {
    code: 'no_target' as const,
    message: 'Not checked.',
    observed: { cname: [], a: [], aaaa: [] },
    checked_at: null,
  },
  metadata: {},
  verified_at: null,
  last_checked_at: null,
  next_check_at: null,
  observation: { code: 'not_checked' as const, message: 'Not checked yet.', values: [] },
  claimed_elsewhere_at: null,
};
const stamps = { created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z' };

export const complete: Handlers = { ...handlers };

// @ts-expect-error a handler map that lacks an operation of the spec does not compile
export const missing: Handlers = (({ spaces_delete, ...rest }) => rest)(handlers);

const etag = '"1.1"';

export const show: Handler<'domains_show'> = async () => ({
  status: 200,
  body: { data: { ...record, ...stamps } },
  etag,
});

export const notModified: Handler<'domains_show'> = async () => ({ status: 304, etag });

// @ts-expect-error a show without the ETag of its 200 does not compile
export const noEtag: Handler<'domains_show'> = async () => ({ status: 200, body: { data: { ...record, ...stamps } } });

// @ts-expect-error a 304 carries no body
export const notModifiedBody: Handler<'domains_show'> = async () => ({ status: 304, etag, body: { data: record } });

// @ts-expect-error a list of records has no ETag
export const listEtag: Handler<'spaces_list'> = async () => ({ status: 200, body: {} as never, etag });

// @ts-expect-error a reply missing a documented field does not compile
export const partial: Handler<'domains_show'> = async () => ({ status: 200, body: { data: record }, etag });

// @ts-expect-error a status the operation does not document does not compile
export const wrongStatus: Handler<'domains_show'> = async () => ({
  status: 201,
  body: { data: { ...record, ...stamps } },
  etag,
});

// @ts-expect-error a store without the Location of its 201 does not compile
export const noLocation: Handler<'domains_store'> = async () => ({
  status: 201,
  body: { data: { ...record, ...stamps } },
  etag,
});

// @ts-expect-error a delete answering with a body does not compile
export const deleteBody: Handler<'spaces_delete'> = async () => ({ status: 204, body: { data: {} } });

// @ts-expect-error a space color must be a number in the reply
export const badColor: Handler<'spaces_show'> = async () => ({
  status: 200,
  body: { data: { id: 1, name: 'x', color: '3', ...stamps } },
  etag,
});

export const readsTypedInput: Handler<'domains_list'> = async ({ query }) => {
  // @ts-expect-error query parameters are typed: per_page is a number, not a string
  const perPage: string = query.per_page;
  void perPage;
  throw new Error('not called');
};

export const readsTypedHeaders: Handler<'spaces_update'> = async ({ headers }) => {
  const ifMatch: string | undefined = headers['If-Match'];
  // @ts-expect-error an update takes no Idempotency-Key
  const key = headers['Idempotency-Key'];
  void ifMatch;
  void key;
  throw new Error('not called');
};
