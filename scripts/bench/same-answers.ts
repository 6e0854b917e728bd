// What the typical-stack peers answer: the service's SQL (same-sql.ts) shaped into the service's bodies, with the
// service's own pure helpers for the envelope and the ETag, so that a peer's answer can be compared to the
// service's byte for byte (bench.ts checks it before printing any figure). The framework around it is the peer's.
import { randomBytes } from 'node:crypto';
import { etagOf } from '../../server/http/conventions/conditional.js';
import { cursorSeal } from '../../server/http/conventions/cursor.js';
import { nextLink } from '../../server/http/conventions/id-cursor.js';
import { paginationOf } from '../../server/http/conventions/pagination.js';
import { type ListParams, spaceRecord as record, sameSql } from './same-sql.js';

export interface Answer {
  status: number;
  body: unknown;
  etag?: string;
  location?: string;
}

const notFound = (id: number): Answer => ({
  status: 404,
  body: { type: '/problems/not-found', title: 'Not Found', status: 404, detail: `There is no space ${id}.` },
});

export function sameAnswers(file: string) {
  const db = sameSql(file);
  // Cursors sealed as the service seals them (AES-256-GCM), with a key of the peer's own.
  const sealing = cursorSeal(async () => randomBytes(32)).sealer();
  return {
    authenticate: db.authenticate,
    /** `query` as the framework coerced it (numbers for page and per_page); `sent` the raw strings. */
    async list(
      accountId: number,
      query: Partial<Record<keyof ListParams | 'sort_by' | 'per_page', unknown>>,
      sent: Record<string, string>,
    ): Promise<Answer> {
      const params: ListParams = {
        search: String(query.search ?? ''),
        sortBy: query.sort_by === 'name' ? 'name' : 'id',
        sort: query.sort === 'asc' ? 'asc' : 'desc',
        page: Number(query.page ?? 1),
        perPage: Number(query.per_page ?? 10),
      };
      const { rows, total } = db.listRows(accountId, params);
      const url = { path: '/api/v1/spaces', sent, seal: await sealing };
      const pagination = paginationOf(url, { ...params }, { total, onPage: rows.length });
      return { status: 200, body: { data: rows.map(record), ...pagination } };
    },
    show(accountId: number, id: number): Answer {
      const row = db.show(accountId, id);
      return row ? { status: 200, body: { data: record(row) }, etag: etagOf(id, Number(row.version)) } : notFound(id);
    },
    store(accountId: number, body: { name: string; color?: number | string }): Answer {
      const row = db.store(accountId, body.name.trim(), Number(body.color ?? 1));
      const id = Number(row.id);
      return {
        status: 201,
        body: { data: record(row) },
        etag: etagOf(id, Number(row.version)),
        location: `/api/v1/spaces/${id}`,
      };
    },
    update(accountId: number, id: number, body: { name?: string; color?: number | string }): Answer {
      const color = body.color === undefined ? undefined : Number(body.color);
      const row = db.update(accountId, id, body.name?.trim(), color);
      return row ? { status: 200, body: { data: record(row) }, etag: etagOf(id, Number(row.version)) } : notFound(id);
    },
    delete(accountId: number, id: number): Answer {
      return db.delete(accountId, id) ? { status: 204, body: undefined } : notFound(id);
    },
    /** `query` as the framework coerced it (per_page a number, its default filled in); `sent` the raw strings. */
    async events(accountId: number, query: { per_page?: unknown }, sent: Record<string, string>): Promise<Answer> {
      const perPage = Number(query.per_page ?? 10);
      const rows = db.events(accountId, perPage);
      const url = { path: '/api/v1/events', sent, seal: await sealing };
      return {
        status: 200,
        body: { data: rows.map((row) => JSON.parse(row.payload)), links: { next: nextLink(url, rows, perPage) } },
      };
    },
  };
}
