// What domains and spaces share in a list: search on the folded name, sort with id as the tie-breaker,
// and one page of rows with the total count. Every cost here stays flat as an account grows: the total of an
// unfiltered list is the count the triggers keep (migration 0004), a search of 3 or more characters in an
// account of more than SCANNED_ACCOUNT_SIZE records goes through the trigram index, and a cursor resumes from an
// index position instead of skipping rows.
import type { Expression, SelectQueryBuilder, SqlBool } from 'kysely';
import { sql } from 'kysely';
import { type Database, engineOf } from './database.js';
import { postgresMatches } from './postgres-search.js';
import { precompiledShape } from './precompiled.js';
import type { DB, ResourceTable } from './schema.js';

/** Where a cursor walk resumes: the sort key of the last row it returned. */
export interface ListPosition {
  id: number;
  nameKey: string;
}

export interface ListQuery {
  /** Substring to look for in the name; empty means no filter. */
  search: string;
  sortBy: 'id' | 'name';
  sort: 'asc' | 'desc';
  perPage: number;
  /** 1-based; ignored when `after` is given. */
  page: number;
  /** Walk by cursor: the rows after this position ('start': from the first row), instead of `page`. */
  after?: ListPosition | 'start';
  /** Only the rows these filters keep; all of them when undefined. */
  filters?: ListFilters;
}

/** What a filtered list keeps: rows holding one of the listed values in each column, and every metadata pair. */
export interface ListFilters {
  /** Columns of the listed table (domains: status, routing_code); an empty list of values keeps no row. */
  columns?: Array<{ column: string; values: string[] }>;
  /** Exact key and value pairs, each one probe of the `<table>_metadata` index (migration 0011). */
  metadata?: Array<[string, string]>;
}

const isFiltered = (filters: ListFilters | undefined): filters is ListFilters =>
  (filters?.columns?.length ?? 0) > 0 || (filters?.metadata?.length ?? 0) > 0;

/** The account's rows that the filters keep. */
function filtered(base: SelectQueryBuilder<DB, ResourceTable, object>, table: ResourceTable, filters: ListFilters) {
  let rows = base;
  for (const { column, values } of filters.columns ?? []) {
    rows = rows.where(
      values.length === 0 ? sql<SqlBool>`1 = 0` : sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`,
    );
  }
  for (const pair of filters.metadata ?? []) rows = rows.where(holdsPair(table, `${table}.id`, pair));
  return rows;
}

/**
 * Whether the record `id` (a column reference) holds the metadata pair: one probe of the pairs' primary key
 * (record_id, key) per record, in a subquery neither engine turns into a join. As `id in (the pair's records)`,
 * SQLite probed one pair's index for every id of another (two pairs held by 5,200 and 2,600 records: 1.7 s).
 */
function holdsPair(table: ResourceTable, id: string, [key, value]: [string, string]) {
  return sql<SqlBool>`(select 1 from ${sql.table(`${table}_metadata`)} as held
    where held.record_id = ${sql.ref(id)} and held.key = ${key} and held.value = ${value}) is not null`;
}

export interface ListResult {
  rows: Array<Record<string, unknown>>;
  /** The number of matching records; a lower bound when `totalExact` is false. */
  total: number;
  /** False when a search or a filter kept more than FEW_MATCHES records, not all counted (default true). */
  totalExact?: boolean;
  /** In a cursor walk, the position to resume from when more rows follow; undefined at the end. */
  next?: ListPosition;
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

/** Trigram indexes find substrings of at least this many characters; shorter searches scan the account. */
export const INDEXED_SEARCH_LENGTH = 3;

/** Up to this many records, an account's search reads its names instead of the trigram index. */
export const SCANNED_ACCOUNT_SIZE = 256;

/**
 * Up to this many matches a search's or a filter's total is exact; past it the count stops and the total is a lower
 * bound (`meta.total_exact: false`).
 */
export const FEW_MATCHES = 5_000;

/** The search as a phrase for the FTS5 trigram table. */
function ftsPhrase(search: string): string {
  return `"${foldText(search).replaceAll('"', '""')}"`;
}

/**
 * Rows whose folded name contains `search`. The LIKE decides, exactly as before the index existed; the index
 * only narrows the candidates. PostgreSQL's planner takes the pg_trgm GIN index for the LIKE by itself.
 */
function matching(search: string, column = 'name_key'): Expression<SqlBool> {
  return like(containsPattern(search), column);
}

/** `column` LIKE a containsPattern. */
function like(pattern: string, column = 'name_key'): Expression<SqlBool> {
  return sql<SqlBool>`${sql.ref(column)} like ${pattern} escape '\\'`;
}

/**
 * The ids of the account's rows matching `search` through SQLite's FTS5 trigram table, at most `limit` of them.
 * The CROSS JOIN pins the plan (SQLite never reorders it): the index is read first and each hit's row fetched by
 * its id. Written as `id in (subquery)`, SQLite picks this plan only with statistics (ANALYZE), which a database
 * grown by the API lacks; without them it walked the account's whole index instead (see the search benchmark).
 */
export function indexedIdsQuery(table: ResourceTable, accountId: number, search: string, limit: number) {
  const [index, rows] = [sql.table(`${table}_search`), sql.table(table)];
  return sql<{ id: number }>`
    select ${rows}.id from ${index} cross join ${rows} on ${rows}.id = ${index}.rowid
    where ${index} match ${ftsPhrase(search)} and ${rows}.account_id = ${accountId}
      and ${matching(search, `${table}.name_key`)}
    limit ${limit}`;
}

/**
 * The account's rows among `ids` (SQLite). `+account_id` keeps SQLite off the account's indexes, so that it
 * reads the few rows by id and sorts them, instead of walking the account's name index in order (which it
 * prefers for a name sort when it has no statistics, many times slower at a million rows).
 */
export function amongIdsQuery(db: Database, table: ResourceTable, accountId: number, ids: number[]) {
  return db
    .selectFrom(table)
    .where(sql<SqlBool>`+account_id = ${accountId}`)
    .where(sql<SqlBool>`id in (select value from json_each(${JSON.stringify(ids)}))`);
}

export async function listPage(
  db: Database,
  table: ResourceTable,
  accountId: number,
  query: ListQuery,
): Promise<ListResult> {
  // Built only where a page needs it: the most asked-for first pages below run queries compiled once.
  const owned = () => db.selectFrom(table).where('account_id', '=', accountId);
  const counted = () =>
    precompiledShape(`count ${table}`, (on, account: number) =>
      on.selectFrom('record_counts').select('total').where('account_id', '=', account).where('resource', '=', table),
    )(db, accountId).then(([row]) => Number(row?.total ?? 0));
  // Filtered rows are counted and read through the filters' indexes: (account_id, status, id),
  // (account_id, routing_code, id), and the metadata pairs' (account_id, key, value, record_id).
  if (isFiltered(query.filters)) {
    if (query.search !== '') {
      const among = await filteredMatches(db, table, accountId, query.search, query.filters);
      if (among) return rowsOf(db, among, query, await countOf(among));
    }
    const { metadata = [], columns = [] } = query.filters;
    if (metadata.length > 0) return pairsFirst(db, table, accountId, query, metadata, columns);
    let kept = filtered(owned(), table, query.filters);
    if (query.search !== '') kept = kept.where(matching(query.search));
    // Counted up to FEW_MATCHES + 1 only, as a search: past it the total is a lower bound.
    const total = await countOf(kept, FEW_MATCHES + 1, db);
    return rowsOf(db, kept, query, total, total <= FEW_MATCHES);
  }
  if (query.search === '') {
    const total = await counted();
    // The most asked-for list, its first page, by a query compiled once per order.
    if (query.after === undefined && query.page === 1 && total > 0) {
      const { sortBy, sort } = query;
      const firstPage = precompiledShape(
        `first page ${table} ${sortBy} ${sort}`,
        (on, account: number, limit: number) =>
          inOrder(on.selectFrom(table).selectAll().where('account_id', '=', account), sortBy, sort).limit(limit),
      );
      return { rows: await firstPage(db, accountId, query.perPage), total };
    }
    return rowsOf(db, owned(), query, total);
  }

  // A small account's names are read directly: a trigram query costs more than reading a few hundred names,
  // and the index holds every account's names. A search of 1
  // or 2 characters cannot use a trigram index and reads the account's names too.
  const indexed = [...foldText(query.search)].length >= INDEXED_SEARCH_LENGTH;
  const size = indexed ? await counted() : 0;
  if (!indexed || size <= SCANNED_ACCOUNT_SIZE) {
    // The most asked-for search, its first page, by queries compiled once per order; the pattern is their value.
    if (query.after === undefined && query.page === 1) {
      const { sortBy, sort } = query;
      const pattern = containsPattern(query.search);
      const scanned = (on: Database, account: number, contains: string) =>
        on.selectFrom(table).where('account_id', '=', account).where(like(contains));
      const [matches] = await precompiledShape(`search count ${table}`, (on, account: number, contains: string) =>
        scanned(on, account, contains).select((eb) => eb.fn.countAll<number | string | bigint>().as('total')),
      )(db, accountId, pattern);
      const total = Number(matches?.total ?? 0);
      if (total === 0) return { rows: [], total };
      const firstPage = precompiledShape(
        `search first page ${table} ${sortBy} ${sort}`,
        (on, account: number, contains: string, limit: number) =>
          inOrder(scanned(on, account, contains).selectAll(), sortBy, sort).limit(limit),
      );
      return { rows: await firstPage(db, accountId, pattern, query.perPage), total };
    }
    const scan = owned().where(matching(query.search));
    return rowsOf(db, scan, query, await countOf(scan));
  }
  // One pass through the index finds the matches, up to FEW_MATCHES of them: their ids give the total, and
  // the page is read among them instead of searching the index a second time. Past FEW_MATCHES the matches are
  // not all counted (that costs in proportion to them): the total is a lower bound.
  // PostgreSQL's way through its trigram index and statistics: postgres-search.ts.
  const sqlite = engineOf(db) === 'sqlite';
  if (!sqlite) {
    const folded = foldText(query.search);
    const found = await postgresMatches(db, table, accountId, { folded, size, fewMatches: FEW_MATCHES });
    if (found.total === 0) return { rows: [], total: 0 };
    return rowsOf(db, found.rows, query, found.total, found.exact);
  }
  const ids = (await indexedIdsQuery(table, accountId, query.search, FEW_MATCHES + 1).execute(db)).rows;
  if (ids.length === 0) return { rows: [], total: 0 };
  const all = owned().where(matching(query.search));
  if (ids.length > FEW_MATCHES) return rowsOf(db, all, query, FEW_MATCHES + 1, false);
  const total = ids.length;
  // Many matches are read by walking the account in the page's order and testing each name, which finds a page
  // sooner than reading every match; few among the ids found. The walk wins when matches² > depth × size.
  const depth = (query.after === undefined ? (query.page - 1) * query.perPage : 0) + query.perPage;
  if (total * total > depth * size) return rowsOf(db, all, query, total);
  const among = amongIdsQuery(
    db,
    table,
    accountId,
    ids.map((row) => Number(row.id)),
  );
  return rowsOf(db, among, query, total);
}

/**
 * A filtered search's rows through the trigram index (as an unfiltered search's, below): its matches, up to
 * FEW_MATCHES, then the filters among them, so that the cost follows the matches rather than the rows the filters
 * keep. Undefined when the search is too short for the index or matches more: the filters' indexes read then.
 */
async function filteredMatches(
  db: Database,
  table: ResourceTable,
  accountId: number,
  search: string,
  filters: ListFilters,
): Promise<SelectQueryBuilder<DB, ResourceTable, object> | undefined> {
  if ([...foldText(search)].length < INDEXED_SEARCH_LENGTH) return undefined;
  if (engineOf(db) === 'sqlite') {
    const ids = (await indexedIdsQuery(table, accountId, search, FEW_MATCHES + 1).execute(db)).rows;
    if (ids.length > FEW_MATCHES) return undefined;
    const among = amongIdsQuery(
      db,
      table,
      accountId,
      ids.map((row) => Number(row.id)),
    );
    return filtered(among, table, filters);
  }
  // `account_id + 0`: the trigram index finds the matches (see listPage); the filters are tested on them.
  const byTrigrams = db.selectFrom(table).where(sql<SqlBool>`account_id + 0 = ${accountId}`).where(matching(search));
  const probe = await byTrigrams
    .select('id')
    .limit(FEW_MATCHES + 1)
    .execute();
  if (probe.length > FEW_MATCHES) return undefined;
  return filtered(byTrigrams, table, filters);
}

/**
 * A list filtered by metadata: its records found from the index of the pair the fewest records hold, each pair
 * found tested against the other pairs (holdsPair) and, for the columns and the search, its record by primary key,
 * up to FEW_MATCHES + 1, so that the cost follows that pair's matches. The page is read among their ids, as a
 * search's is. Past FEW_MATCHES the total is a lower bound and the page is read by walking the account in the page's
 * order, each record tested against each pair.
 *
 * As a join of the account's records with the pairs, PostgreSQL, which cannot know how few records hold a pair,
 * hashed or sorted every record of the account (100k domains, 1,000 holding the pair: 55 to 75 ms for the first
 * page, with a sort spilled to disk).
 */
async function pairsFirst(
  db: Database,
  table: ResourceTable,
  accountId: number,
  query: ListQuery,
  metadata: Array<[string, string]>,
  columns: NonNullable<ListFilters['columns']>,
): Promise<ListResult> {
  const byRarity = metadata.length > 1 ? await rarestFirst(db, table, accountId, metadata) : metadata;
  const [driver, ...others] = byRarity;
  if (driver === undefined) return { rows: [], total: 0 };
  const [key, value] = driver;
  // The other pairs are probed by the pair's record id; the record itself is read only for the columns and the
  // search (a pair is written with its record's account and goes with the record).
  const tests = others.map((other) => sql`and ${holdsPair(table, 'pair.record_id', other)}`);
  if (columns.length > 0 || query.search !== '') {
    let record = filtered(
      db
        .selectFrom(table)
        .select(sql<number>`1`.as('kept'))
        .where(sql<SqlBool>`id = pair.record_id`)
        .where('account_id', '=', accountId),
      table,
      { columns },
    );
    if (query.search !== '') record = record.where(matching(query.search));
    tests.push(sql`and (${record}) is not null`);
  }
  const matches = sql<{ id: number | string | bigint }>`
    select pair.record_id as id from ${sql.table(`${table}_metadata`)} as pair
    where pair.account_id = ${accountId} and pair.key = ${key} and pair.value = ${value} ${sql.join(tests, sql` `)}
    limit ${FEW_MATCHES + 1}`;
  if (engineOf(db) === 'sqlite') {
    const ids = (await matches.execute(db)).rows.map((row) => Number(row.id));
    if (ids.length <= FEW_MATCHES) return rowsOf(db, amongIdsQuery(db, table, accountId, ids), query, ids.length);
  } else {
    const { rows } = await sql<{ total: number | string | bigint }>`
      select count(*) as total from (${matches}) as found`.execute(db);
    const total = Number(rows[0]?.total ?? 0);
    // Among the ids as an array computed in the query, as a search's (postgres-search.ts): the planner, misled
    // about how few they are, would otherwise walk an index of the account in the page's order.
    const among = db
      .selectFrom(table)
      .where(sql<SqlBool>`id = any(array(${matches}))`)
      .where('account_id', '=', accountId);
    if (total <= FEW_MATCHES) return rowsOf(db, among, query, total);
  }
  let walked = filtered(db.selectFrom(table).where('account_id', '=', accountId), table, {
    columns,
    metadata: byRarity,
  });
  if (query.search !== '') walked = walked.where(matching(query.search));
  return rowsOf(db, walked, query, FEW_MATCHES + 1, false);
}

/**
 * The pairs, the one the fewest of the account's records hold first; none when a pair is held by no record, so
 * that nothing is. Each is counted from the pairs' index up to a limit that grows (101, 1,001, then FEW_MATCHES + 1)
 * until the rarest is counted short of it: a pair a few records hold is told from a dense one without counting
 * the dense one's 5,001.
 */
async function rarestFirst(
  db: Database,
  table: ResourceTable,
  accountId: number,
  metadata: Array<[string, string]>,
): Promise<Array<[string, string]>> {
  const pairs = sql.table(`${table}_metadata`);
  const heldUpTo = async ([key, value]: [string, string], limit: number) => {
    const { rows } = await sql<{ held: number | string | bigint }>`
      select count(*) as held from (
        select 1 from ${pairs} where account_id = ${accountId} and key = ${key} and value = ${value}
        limit ${limit}
      ) as found`.execute(db);
    return Number(rows[0]?.held ?? 0);
  };
  let counted: Array<{ pair: [string, string]; held: number }> = [];
  for (const limit of [101, 1_001, FEW_MATCHES + 1]) {
    counted = [];
    for (const pair of metadata) {
      const held = await heldUpTo(pair, limit);
      if (held === 0) return [];
      counted.push({ pair, held });
    }
    if (Math.min(...counted.map(({ held }) => held)) < limit) break;
  }
  return counted.sort((a, b) => a.held - b.held).map(({ pair }) => pair);
}

/** The number of rows of `base`, or `upTo` (given with `db`) when there are at least that many: it reads no further. */
async function countOf(
  base: SelectQueryBuilder<DB, ResourceTable, object>,
  upTo?: number,
  db?: Database,
): Promise<number> {
  const counted =
    upTo === undefined || db === undefined
      ? base.select((eb) => eb.fn.countAll<number | string | bigint>().as('total'))
      : db
          .selectFrom(base.select(sql`1`.as('one')).limit(upTo).as('found'))
          .select((eb) => eb.fn.countAll<number | string | bigint>().as('total'));
  const row = await counted.executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** `rows` in a list's order: by name when asked, then by id (the tie-breaker), in the same direction. */
// biome-ignore lint/suspicious/noExplicitAny: any selection of the listed table.
function inOrder<Q extends SelectQueryBuilder<DB, ResourceTable, any>>(
  rows: Q,
  sortBy: ListQuery['sortBy'],
  sort: ListQuery['sort'],
): Q {
  return (sortBy === 'name' ? rows.orderBy('name_key', sort) : rows).orderBy('id', sort) as unknown as Q;
}

/** One page of `base` (the account's rows, maybe filtered), by page number or after a cursor. */
async function rowsOf(
  db: Database,
  base: SelectQueryBuilder<DB, ResourceTable, object>,
  query: ListQuery,
  total: number,
  totalExact = true,
): Promise<ListResult> {
  const byName = query.sortBy === 'name';
  // biome-ignore lint/suspicious/noExplicitAny: any selection of the listed table.
  const ordered = <Q extends SelectQueryBuilder<DB, ResourceTable, any>>(q: Q): Q =>
    inOrder(q, query.sortBy, query.sort);

  if (query.after !== undefined) {
    const { after } = query;
    let walk = base.selectAll();
    if (after !== 'start') {
      const direction = query.sort === 'asc' ? '>' : '<';
      walk = byName
        ? walk.where((eb) => eb(eb.refTuple('name_key', 'id'), direction, eb.tuple(after.nameKey, after.id)))
        : walk.where('id', direction, after.id);
    }
    const rows = await ordered(walk)
      .limit(query.perPage + 1)
      .execute();
    if (rows.length <= query.perPage) return { rows, total, totalExact };
    rows.pop();
    const last = rows.at(-1) as { id: number; name_key: string };
    return { rows, total, totalExact, next: { id: Number(last.id), nameKey: last.name_key } };
  }

  const offset = (query.page - 1) * query.perPage;
  if (totalExact && offset >= total) return { rows: [], total };
  // With a lower bound for the total, one row more than the page tells whether another page follows.
  const take = totalExact ? query.perPage : query.perPage + 1;
  const rows =
    offset === 0
      ? await ordered(base.selectAll()).limit(take).execute()
      : // A deep page skips its offset over the ids alone (the index covers them), then reads just its own rows.
        // On PostgreSQL the page's ids are an array computed once (an InitPlan): as `id in (subquery)`, a planner
        // without statistics (before autovacuum's first ANALYZE) ran the offset subquery again for every row.
        await ordered(
          engineOf(db) === 'postgres'
            ? base
                .selectAll()
                .where(sql<SqlBool>`id = any(array(${ordered(base.select('id')).limit(take).offset(offset)}))`)
            : base.selectAll().where('id', 'in', ordered(base.select('id')).limit(take).offset(offset)),
        ).execute();
  if (totalExact) return { rows, total };
  const reached = rows.length === 0 ? 0 : offset + rows.length;
  if (rows.length > query.perPage) rows.pop();
  return { rows, total: Math.max(total, reached), totalExact };
}
