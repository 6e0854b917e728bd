// What domains and spaces share in a list: search on the folded name, sort with id as the tie-breaker,
// and one page of rows with the total count. Portable SQL only (LIKE ... ESCAPE works on SQLite and PostgreSQL).
import { sql } from 'kysely';
import type { Database } from './database.js';

export interface ListQuery {
  /** Substring to look for in the name; empty means no filter. */
  search: string;
  sortBy: 'id' | 'name';
  sort: 'asc' | 'desc';
  perPage: number;
  /** 1-based. */
  page: number;
}

/**
 * Folds text for case-insensitive, Unicode-aware comparison: compatibility-normalised, then upper- and
 * lower-cased so that one-to-many mappings fold too ("Straße" and "STRASSE" both become "strasse").
 */
export function foldText(text: string): string {
  return text.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');
}

/** A LIKE pattern matching `text` anywhere, with `%`, `_` and `\` standing for themselves. */
export function containsPattern(text: string): string {
  return `%${foldText(text).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listPage<T extends 'domains' | 'spaces'>(
  db: Database,
  table: T,
  accountId: number,
  query: ListQuery,
): Promise<{ rows: Array<Record<string, unknown>>; total: number }> {
  let base = db.selectFrom(table as 'domains' | 'spaces').where('account_id', '=', accountId);
  if (query.search !== '') {
    base = base.where(sql<boolean>`name_key like ${containsPattern(query.search)} escape '\\'`);
  }
  const counted = await base.select((eb) => eb.fn.countAll<number | string | bigint>().as('total')).executeTakeFirst();
  const total = Number(counted?.total ?? 0);
  const offset = (query.page - 1) * query.perPage;
  if (offset >= total) return { rows: [], total };

  let rows = base.selectAll();
  if (query.sortBy === 'name') rows = rows.orderBy('name_key', query.sort);
  return { rows: await rows.orderBy('id', query.sort).limit(query.perPage).offset(offset).execute(), total };
}
