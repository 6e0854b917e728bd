// `npm run bench:domain-filters` (ENGINE=sqlite, the default, or ENGINE=postgres): what a filtered list of
// domains costs against the unfiltered one, in one account of SIZE (100,000) domains seeded straight into a fresh
// database (no ANALYZE unless ANALYZE=1, as PostgreSQL's autovacuum does: a database grown by the API has no
// statistics but those the engines gather themselves).
// Each request is the domains repository's list, as the handler calls it (filters by state, by routing code and
// by metadata), timed RUNS (7) times; the median is printed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../server/db/database.js';
import type { ListFilters, ListQuery } from '../../server/db/listing.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { DEFAULT_SCHEDULE } from '../../server/domains/check-rules.js';
import { domainNameKey } from '../../server/domains/fields.js';
import { domainRepository } from '../../server/domains/repository.js';
import { serializeMetadata } from '../../server/metadata/rules.js';
import { scratchPostgres } from './postgres-scratch.js';

const ENGINE = process.env.ENGINE === 'postgres' ? 'postgres' : 'sqlite';
const SIZE = Number(process.env.SIZE ?? 100_000);
const RUNS = Number(process.env.RUNS ?? 7);
const ANALYZE = process.env.ANALYZE === '1';
const TARGETS = { cname: 'edge.platform.example', a: ['192.0.2.10'], aaaa: [] };

// Shares of the seeded domains: most active and pointed, a few of each other kind.
const STATUSES = [
  'active',
  'active',
  'active',
  'active',
  'active',
  'active',
  'active',
  'pending',
  'pending',
  'misconfigured',
];
const CODES = [
  'pointed',
  'pointed',
  'pointed',
  'pointed',
  'pointed',
  'pointed',
  'not_pointed',
  'not_pointed',
  'missing',
  'partly_pointed',
];

async function database(): Promise<{ db: Database; drop: () => Promise<void> }> {
  if (ENGINE === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'dss-bench-filters-'));
    const db = openDatabase(`sqlite:${join(dir, 'bench.sqlite')}`);
    return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const scratch = await scratchPostgres(
    process.env.DSS_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    'dss_bench_filters',
  );
  return {
    db: openDatabase(scratch.url),
    drop: async () => {
      if (process.env.KEEP) return console.log(`kept ${scratch.url}`);
      await scratch.drop();
    },
  };
}

async function seed(db: Database): Promise<number> {
  const now = new Date().toISOString();
  const account = await db
    .insertInto('accounts')
    .values({ name: 'bench', created_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  const accountId = Number(account.id);
  const observed = JSON.stringify({ message: 'seeded', observed: { cname: [], a: [], aaaa: [] } });
  for (let from = 0; from < SIZE; from += 1000) {
    const rows = Array.from({ length: Math.min(1000, SIZE - from) }, (_, j) => {
      const i = from + j;
      const name = `shop-${i}.example.com`;
      return {
        account_id: accountId,
        name,
        name_key: domainNameKey(name),
        status: STATUSES[i % STATUSES.length] as string,
        verification_token: `token-${i}`,
        state_since: now,
        created_at: now,
        updated_at: now,
        routing_code: CODES[(i * 7) % CODES.length] as string,
        routing: observed,
        routing_checked_at: now,
        metadata: serializeMetadata({ tenant: `t_${i % 100}`, region: `r_${i % 2}` }),
      };
    });
    const inserted = await db.insertInto('domains').values(rows).returning(['id', 'metadata']).execute();
    await db
      .insertInto('domains_metadata')
      .values(
        inserted.flatMap((row) =>
          Object.entries(JSON.parse(row.metadata) as Record<string, string>).map(([key, value]) => ({
            record_id: Number(row.id),
            account_id: accountId,
            key,
            value,
          })),
        ),
      )
      .execute();
  }
  return accountId;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main() {
  const { db, drop } = await database();
  try {
    await migrateToLatest(db);
    const seeding = performance.now();
    const accountId = await seed(db);
    console.log(`${ENGINE}: seeded ${SIZE} domains in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    if (ANALYZE) await sql.raw(ENGINE === 'postgres' ? 'vacuum analyze' : 'analyze').execute(db);
    const domains = domainRepository(db, DEFAULT_SCHEDULE, async () => {}, TARGETS);
    const list = (query: Partial<ListQuery>, filters?: ListFilters) =>
      domains.list(accountId, { search: '', sortBy: 'id', sort: 'desc', perPage: 25, page: 1, ...query, filters });
    const status = (...values: string[]) => ({ columns: [{ column: 'status', values }] });
    const routing = (...values: string[]) => ({ columns: [{ column: 'routing_code', values }] });
    const cases: Array<[string, () => Promise<{ total: number }>]> = [
      ['GET /domains (unfiltered, page 1)', () => list({})],
      ['GET /domains?page=50 (unfiltered)', () => list({ page: 50 })],
      ['?status=misconfigured (10%)', () => list({}, status('misconfigured'))],
      ['?status=pending,misconfigured (30%)', () => list({}, status('pending', 'misconfigured'))],
      ['?status=misconfigured&page=50', () => list({ page: 50 }, status('misconfigured'))],
      ['?status=misconfigured&sort_by=name', () => list({ sortBy: 'name', sort: 'asc' }, status('misconfigured'))],
      ['?routing=partly_pointed (10%)', () => list({}, routing('partly_pointed'))],
      ['?routing=not_pointed,missing (30%)', () => list({}, routing('not_pointed', 'missing'))],
      [
        '?status=active&routing=pointed',
        () => list({}, { columns: [...status('active').columns, ...routing('pointed').columns] }),
      ],
      ['?routing=missing&after= (cursor walk)', () => list({ after: 'start' }, routing('missing'))],
      ['?metadata[tenant]=t_7 (1%)', () => list({}, { metadata: [['tenant', 't_7']] })],
      ['?metadata[tenant]=t_7&status=active', () => list({}, { ...status('active'), metadata: [['tenant', 't_7']] })],
      [
        '?metadata[region]=r_1&metadata[tenant]=t_7 (50% and 1%)',
        () =>
          list(
            {},
            {
              metadata: [
                ['region', 'r_1'],
                ['tenant', 't_7'],
              ],
            },
          ),
      ],
      [
        '?metadata[region]=r_1 (50%)&sort_by=name',
        () => list({ sortBy: 'name', sort: 'asc' }, { metadata: [['region', 'r_1']] }),
      ],
      ['?search=shop-99&routing=pointed', () => list({ search: 'shop-99' }, routing('pointed'))],
    ];
    console.log(`| request (${ENGINE}${ANALYZE ? ', analyzed' : ''}, ${SIZE} domains) | median ms | total |`);
    console.log('| --- | ---: | ---: |');
    for (const [label, run] of cases) {
      const times: number[] = [];
      let total = 0;
      try {
        for (let i = 0; i < RUNS; i++) {
          const started = performance.now();
          total = (await run()).total;
          times.push(performance.now() - started);
        }
        console.log(`| ${label} | ${median(times).toFixed(2)} | ${total} |`);
      } catch (error) {
        console.log(`| ${label} | failed: ${error instanceof Error ? error.message : error} | |`);
      }
    }
  } finally {
    await db.destroy();
    await drop();
  }
}

await main();
