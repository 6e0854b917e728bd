// Group commit on SQLite (server/db/sqlite-dialect.ts) against a model: random batches of writes run at once, at
// random turns of the event loop, so that they share COMMITs in ever other ways: single statements, transactions
// that commit, transactions that throw (rolled back to their savepoint alone), a constraint violation inside a
// transaction that the transaction survives, savepoints of the transaction's own rolled back or released, and
// statements that fail. The model is a map; after each batch, and as each write settles, what another connection
// sees (committed state only) must be the model. A seeded PRNG: the seeds below, or DSS_MODEL_SEED to replay one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type SQLite from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../server/db/database.js';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';

const SEEDS = process.env.DSS_MODEL_SEED ? [Number(process.env.DSS_MODEL_SEED)] : [1, 2, 3, 5, 8];
const BATCHES = 12;
const KEYS = Array.from({ length: 120 }, (_, i) => `k${i}`);

// biome-ignore lint/suspicious/noExplicitAny: a table of the test's own, outside the service's schema.
type AnyDb = Kysely<any>;
type Model = Map<string, number>;

/** mulberry32: small, fast, and the same sequence for a seed everywhere. */
function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n), chance: (p: number) => next() < p };
}
type Random = ReturnType<typeof prng>;

/** A write of the batch: what it does, and what it changes in the model when it succeeds. */
interface Write {
  label: string;
  run(db: AnyDb): Promise<void>;
  /** The model's changes once it has committed; undefined when it must fail. */
  effect: Array<[string, number | undefined]> | undefined;
}

class Planned extends Error {}

const put = (db: AnyDb | Transaction<unknown>, k: string, v: number) =>
  sql`insert into kv (k, v) values (${k}, ${v}) on conflict (k) do update set v = excluded.v`.execute(db as AnyDb);
const insert = (db: AnyDb | Transaction<unknown>, k: string, v: number) =>
  sql`insert into kv (k, v) values (${k}, ${v})`.execute(db as AnyDb);
const remove = (db: AnyDb | Transaction<unknown>, k: string) => sql`delete from kv where k = ${k}`.execute(db as AnyDb);
/** Yields to the event loop `turns` times: the writes of the batch come at different turns, and groups form. */
const turns = async (count: number) => {
  for (let i = 0; i < count; i++) await new Promise((resolve) => setImmediate(resolve));
};

/**
 * One write on `keys` (no other write of its batch touches them, so the batch's outcome does not depend on the
 * order the writes take the writer in), given the model before the batch.
 */
function planWrite(random: Random, keys: string[], model: Model, n: number): Write {
  const [a = '', b = '', c = ''] = keys;
  const value = () => random.int(1000);
  const kind = random.int(8);
  const delay = random.int(3);
  const start = (run: (db: AnyDb) => Promise<void>) => async (db: AnyDb) => {
    await turns(delay);
    await run(db);
  };
  switch (kind) {
    case 0: {
      const v = value();
      return { label: `put ${a}=${v}`, run: start((db) => put(db, a, v).then(() => {})), effect: [[a, v]] };
    }
    case 1: {
      // A plain insert: a constraint violation when the key is there, which fails this write alone.
      const v = value();
      return {
        label: `insert ${a}=${v}`,
        run: start((db) => insert(db, a, v).then(() => {})),
        effect: model.has(a) ? undefined : [[a, v]],
      };
    }
    case 2:
      return { label: `delete ${a}`, run: start((db) => remove(db, a).then(() => {})), effect: [[a, undefined]] };
    case 3: {
      // A transaction of several writes that commits, yielding to the event loop while it holds the writer.
      const [v, w] = [value(), value()];
      return {
        label: `transaction put ${a}=${v}, ${b}=${w}, delete ${c}`,
        run: start((db) =>
          db.transaction().execute(async (trx) => {
            await put(trx, a, v);
            await turns(random.int(2));
            await put(trx, b, w);
            await remove(trx, c);
          }),
        ),
        effect: [
          [a, v],
          [b, w],
          [c, undefined],
        ],
      };
    }
    case 4: {
      // A transaction that throws after writing: nothing of it stays, and nothing of the others goes with it.
      const [v, w] = [value(), value()];
      return {
        label: `transaction put ${a}=${v}, ${b}=${w}, then throws`,
        run: start((db) =>
          db.transaction().execute(async (trx) => {
            await put(trx, a, v);
            await put(trx, b, w);
            await turns(random.int(2));
            throw new Planned(`write ${n} throws`);
          }),
        ),
        effect: undefined,
      };
    }
    case 5: {
      // A constraint violation inside a transaction that catches it: the statement alone is undone.
      const [v, w] = [value(), value()];
      const clash = model.has(b);
      return {
        label: `transaction put ${a}=${v}, insert ${b}=${w} (caught)`,
        run: start((db) =>
          db.transaction().execute(async (trx) => {
            await put(trx, a, v);
            await insert(trx, b, w).catch((error: unknown) => {
              if (!clash) throw error;
            });
          }),
        ),
        effect: clash
          ? [[a, v]]
          : [
              [a, v],
              [b, w],
            ],
      };
    }
    case 6: {
      // A savepoint of the transaction's own, rolled back or released.
      const [v, w] = [value(), value()];
      const rollBack = random.chance(0.5);
      return {
        label: `transaction put ${a}=${v}, savepoint, put ${b}=${w}, ${rollBack ? 'rolled back' : 'released'}`,
        run: start((db) =>
          db.transaction().execute(async (trx) => {
            await put(trx, a, v);
            await sql`savepoint own`.execute(trx);
            await put(trx, b, w);
            if (rollBack) await sql`rollback to own`.execute(trx);
            await sql`release own`.execute(trx);
          }),
        ),
        effect: rollBack
          ? [[a, v]]
          : [
              [a, v],
              [b, w],
            ],
      };
    }
    default: {
      // A statement that fails (NOT NULL) inside a transaction that does not catch it: the whole write is undone.
      const v = value();
      return {
        label: `transaction put ${a}=${v}, then a failing statement`,
        run: start((db) =>
          db.transaction().execute(async (trx) => {
            await put(trx, a, v);
            await sql`insert into kv (k, v) values (${b}, null)`.execute(trx);
          }),
        ),
        effect: undefined,
      };
    }
  }
}

let dir: string;
let file: string;
let db: AnyDb;
/** Another connection to the file, as another process would have: it sees committed changes only. */
let other: SQLite.Database;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-group-model-'));
  file = join(dir, 'db.sqlite');
  db = openDatabase(`sqlite:${file}`) as unknown as AnyDb;
  await sql`create table kv (k text primary key, v integer not null)`.execute(db);
  other = new (sqliteDriver())(file);
});
afterAll(async () => {
  other?.close();
  await db?.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const committedState = (): Record<string, number> =>
  Object.fromEntries(
    (other.prepare('select k, v from kv order by k').all() as Array<{ k: string; v: number }>).map((row) => [
      row.k,
      row.v,
    ]),
  );
const asObject = (model: Model) => Object.fromEntries([...model].sort(([x], [y]) => (x < y ? -1 : 1)));

describe('group commit against a model', () => {
  it.each(SEEDS)('seed %i: every batch of concurrent writes leaves the database equal to the model', async (seed) => {
    await sql`delete from kv`.execute(db);
    const random = prng(seed);
    const model: Model = new Map();
    for (let batch = 0; batch < BATCHES; batch++) {
      // Each write gets keys of its own; up to 40 writes, past the 32 one COMMIT holds.
      const free = [...KEYS].sort(() => random.next() - 0.5);
      const count = 1 + random.int(Math.min(40, Math.floor(free.length / 3)));
      const writes = Array.from({ length: count }, (_, n) => planWrite(random, free.splice(0, 3), model, n));
      const context = () => `seed ${seed} (DSS_MODEL_SEED=${seed} to replay), batch ${batch}`;
      const outcomes = await Promise.all(
        writes.map((write) =>
          write.run(db).then(
            // Settled only once committed: another connection sees it then.
            () => ({ write, ok: true as const, seen: write.effect?.every(([k, v]) => committedState()[k] === v) }),
            (error: unknown) => ({ write, ok: false as const, error }),
          ),
        ),
      );
      for (const outcome of outcomes) {
        const expected = outcome.write.effect !== undefined;
        expect(
          outcome.ok,
          `${context()}: ${outcome.write.label}: ${outcome.ok ? 'succeeded' : String(outcome.error)}`,
        ).toBe(expected);
        if (outcome.ok) {
          expect(outcome.seen, `${context()}: ${outcome.write.label} settled before it was committed`).toBe(true);
        }
        for (const [k, v] of outcome.write.effect ?? []) {
          if (v === undefined) model.delete(k);
          else model.set(k, v);
        }
      }
      expect(committedState(), `${context()}: the committed state`).toEqual(asObject(model));
      // The service's own reads (the reader connection) see the same.
      const read = await sql<{ k: string; v: number }>`select k, v from kv order by k`.execute(db);
      expect(Object.fromEntries(read.rows.map((row) => [row.k, row.v])), `${context()}: a read`).toEqual(
        asObject(model),
      );
    }
  });
});
