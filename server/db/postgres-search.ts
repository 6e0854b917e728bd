// How PostgreSQL finds a search's matches in a large account, from the planner's own sample of the names (the
// statistics ANALYZE gathers, as autovacuum does): a search that many names match is counted by walking the
// account in order until FEW_MATCHES + 1 are found, and a search of several words asks the trigram index only for
// its rarest word, whose candidates are then tested against the whole search. Without statistics (a database no
// ANALYZE has seen yet) every search goes through the trigram index with all its trigrams.
import { type SelectQueryBuilder, type SqlBool, sql } from 'kysely';
import type { Database } from './database.js';
import type { DB, ResourceTable } from './schema.js';

/** What a search of one account reads: its matching rows, and how many there are (`exact` false: a lower bound). */
export interface PostgresMatches {
  /** The account's matching rows, for the page (its order and limit come from the list). */
  rows: SelectQueryBuilder<DB, ResourceTable, object>;
  total: number;
  exact: boolean;
}

/** A word of a search: 3 or more ASCII letters or digits, which give the trigram index trigrams in any locale. */
const WORD = /[a-z0-9]{3,}/g;

/** At least this share of the sampled names match: the search is counted by walking the account in order. */
const DENSE = 0.05;

/** The longest walk a dense search's count takes (FEW_MATCHES + 1 matches at twice DENSE's rate) before the index. */
const WALKED_ROWS = 100_000;

/** At most this share of the sampled names contain a word: it alone narrows the candidates. */
const RARE = 0.02;

/** How long a sample of names serves before it is read again (autovacuum's ANALYZE renews it now and then). */
const SAMPLE_TTL_MS = 60_000;

interface Sample {
  /** Names and the share of the table each stands for. */
  names: Array<{ name: string; weight: number }>;
  readAt: number;
}

const samples = new WeakMap<Database, Map<ResourceTable, Sample>>();

/**
 * The planner's sample of the table's folded names (most common values with their frequencies, and the
 * histogram's bounds for the rest), undefined when the table has no statistics yet.
 */
async function sampleOf(db: Database, table: ResourceTable): Promise<Sample | undefined> {
  const byTable = samples.get(db) ?? new Map<ResourceTable, Sample>();
  samples.set(db, byTable);
  const cached = byTable.get(table);
  if (cached && Date.now() - cached.readAt < SAMPLE_TTL_MS) return cached.names.length > 0 ? cached : undefined;
  const { rows } = await sql<{ mcv: string[] | null; freqs: number[] | null; bounds: string[] | null }>`
    select most_common_vals::text::text[] as mcv, most_common_freqs as freqs, histogram_bounds::text::text[] as bounds
    from pg_stats where schemaname = current_schema() and tablename = ${table} and attname = 'name_key'`.execute(db);
  const [stats] = rows;
  const names: Sample['names'] = [];
  if (stats) {
    const mcv = stats.mcv ?? [];
    const freqs = stats.freqs ?? [];
    for (const [i, name] of mcv.entries()) names.push({ name, weight: freqs[i] ?? 0 });
    const bounds = stats.bounds ?? [];
    const rest = Math.max(0, 1 - freqs.reduce((sum, f) => sum + f, 0));
    for (const name of bounds) names.push({ name, weight: rest / bounds.length });
  }
  const sample = names.length > 0 ? { names, readAt: Date.now() } : undefined;
  // A table without statistics is asked again after the same time: ANALYZE may have run meanwhile.
  byTable.set(table, sample ?? { names: [], readAt: Date.now() });
  return sample;
}

/** The share of the sampled names that contain `text`. */
function shareOf(sample: Sample, text: string): number {
  return sample.names.reduce((share, { name, weight }) => (name.includes(text) ? share + weight : share), 0);
}

/**
 * The parts of a folded search around each of its words, with the ASCII character either side (which makes
 * the word's first and last trigrams those of a word's edge, rarer than its inside): "team 999" gives "team "
 * and " 999". Each is contained in every name the search matches.
 */
export function searchWords(folded: string): string[] {
  const words: string[] = [];
  for (const match of folded.matchAll(WORD)) {
    const before = match.index > 0 && folded.charCodeAt(match.index - 1) < 0x80 ? 1 : 0;
    const end = match.index + match[0].length;
    const after = end < folded.length && folded.charCodeAt(end) < 0x80 ? 1 : 0;
    words.push(folded.slice(match.index - before, end + after));
  }
  return words;
}

const likeOf = (text: string) => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/**
 * The account's rows matching the folded `search`, counted up to `fewMatches` + 1, in an account of `size`
 * records. `pinned` is the query every search ran before (the whole search through the trigram index).
 */
export async function postgresMatches(
  db: Database,
  table: ResourceTable,
  accountId: number,
  search: { folded: string; size: number; fewMatches: number },
): Promise<PostgresMatches> {
  const { folded, size, fewMatches } = search;
  const contains = sql<SqlBool>`name_key like ${likeOf(folded)} escape '\\'`;
  // `account_id + 0` leaves the trigram index the only one the planner can use for the matches: without statistics
  // it ANDed in the account's whole index beside it, whose cost grows with the account.
  const byIndex = (narrowed: SelectQueryBuilder<DB, ResourceTable, object>) =>
    narrowed.where(sql<SqlBool>`account_id + 0 = ${accountId}`);
  const counted = async (rows: SelectQueryBuilder<DB, ResourceTable, object>) => {
    const [row] = await db
      .selectFrom(
        rows
          .select(sql`1`.as('one'))
          .limit(fewMatches + 1)
          .as('found'),
      )
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .execute();
    return Number(row?.n ?? 0);
  };
  const owned = db.selectFrom(table).where('account_id', '=', accountId);
  const sample = await sampleOf(db, table);

  if (sample && shareOf(sample, folded) >= DENSE) {
    // Many names match: the first FEW_MATCHES + 1 are found by walking the account's (account_id, id) index in
    // order, a walk as long as FEW_MATCHES / share rows, however large the account.
    const walked = db
      .selectFrom(
        db
          .selectFrom(table)
          .select('name_key')
          .where('account_id', '=', accountId)
          .orderBy('id')
          .limit(WALKED_ROWS)
          .as('walk'),
      )
      .select(sql`1`.as('one'))
      .where(sql<SqlBool>`strpos(name_key, ${folded}) > 0`)
      .limit(fewMatches + 1);
    const [row] = await db
      .selectFrom(walked.as('found'))
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .execute();
    const found = Number(row?.n ?? 0);
    // The planner has the same statistics, so it reads a page of many matches by walking the account in order.
    if (found > fewMatches) return { rows: owned.where(contains), total: found, exact: false };
    if (size <= WALKED_ROWS) return { rows: owned.where(contains), total: found, exact: true };
    // Fewer matches than the sample said: the index counts them.
  }

  // The index reads only the rarest word's trigrams when the sample says it is rare: its candidates are few, and
  // each is tested against the whole search; a common word's trigrams would cost a read of most of the account.
  const words = searchWords(folded);
  let narrowed = db.selectFrom(table).where(contains);
  if (sample && words.length > 1) {
    const [rarest] = words
      .map((word) => ({ word, share: shareOf(sample, word) }))
      .sort((a, b) => a.share - b.share || b.word.length - a.word.length);
    if (rarest && rarest.share <= RARE) {
      narrowed = db
        .selectFrom(table)
        .where(sql<SqlBool>`name_key like ${likeOf(rarest.word)} escape '\\'`)
        .where(sql<SqlBool>`strpos(name_key, ${folded}) > 0`);
    }
  }
  const matches = byIndex(narrowed);
  const total = await counted(matches);
  if (total > fewMatches) return { rows: owned.where(contains), total, exact: false };
  if (!sample) return { rows: matches, total, exact: true };
  // The page is read among the matches' ids, an array computed once: the planner, misled about how few they
  // are, would otherwise walk an index of the account in the page's order.
  return {
    rows: db
      .selectFrom(table)
      .where(sql<SqlBool>`id = any(array(${matches.select('id')}))`)
      .where('account_id', '=', accountId),
    total,
    exact: true,
  };
}
