// Kysely queries built and compiled once, then run with each call's values: kysely otherwise builds and
// compiles a new query tree on every call, which costs more than the small queries of this API themselves.
import type { Compilable, CompiledQuery } from 'kysely';
import { type Database, engineOf } from './database.js';

/**
 * Stand-ins for the build function's arguments while the query is compiled: plain numbers and strings, as
 * kysely expects, which no query of ours holds as a constant, so that their places among the compiled query's
 * parameters (its public `parameters`) are where each call's values go.
 */
const STAND_IN_BASE = -0x7ff0_0000_0000;
const standInFor = (i: number, like: number | string) =>
  typeof like === 'string' ? `\u0000precompiled argument ${i}\u0000` : STAND_IN_BASE - i;

/**
 * Wraps `build` (whose arguments, integers or strings, may only be used as values: where operands, inserted or
 * set values, limits) into a function that compiles it on first use and afterwards only puts each call's values
 * in place.
 */
export function precompiled<A extends Array<number | string>, R>(
  db: Database,
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  const run = precompiledOnAny((_db: Database, ...args: A) => build(...args));
  return (...args) => run(db, ...args);
}

/**
 * As `precompiled`, for a query run on any connection of the service's databases (the app's, or the transaction
 * a change runs in): compiled once per engine, the first time each engine runs it.
 */
export function precompiledOnAny<A extends Array<number | string>, R>(
  build: (db: Database, ...args: A) => Compilable<R>,
): (db: Database, ...args: A) => Promise<R[]> {
  const byEngine = new Map<string, { query: CompiledQuery<R>; argumentAt: number[] }>();
  return async (db, ...args) => {
    const engine = engineOf(db);
    let compiled = byEngine.get(engine);
    if (!compiled) {
      compiled = compile((...values: A) => build(db, ...values), args);
      byEngine.set(engine, compiled);
    }
    const { query, argumentAt } = compiled;
    return (await db.executeQuery<R>({ ...query, parameters: valuesOf(query, argumentAt, args) })).rows;
  };
}

function valuesOf(query: CompiledQuery<unknown>, argumentAt: number[], args: Array<number | string>): unknown[] {
  return query.parameters.map((value, i) => {
    const at = argumentAt[i] ?? -1;
    return at >= 0 ? args[at] : value;
  });
}

/** `first`: the first call's arguments, whose types (number or string) the stand-ins take. */
function compile<A extends Array<number | string>, R>(build: (...args: A) => Compilable<R>, first: A) {
  const standIns = first.map((value, i) => standInFor(i, value));
  const query = build(...(standIns as A)).compile();
  const argumentAt = query.parameters.map((value) =>
    typeof value === 'number' || typeof value === 'string' ? standIns.indexOf(value) : -1,
  );
  const missing = standIns.map((_, i) => i).filter((i) => !argumentAt.includes(i));
  // An argument used other than as a value (e.g. to choose a column) would be compiled into the text itself.
  if (missing.length > 0) throw new Error(`precompiled: argument(s) ${missing.join(', ')} are not query values`);
  return { query, argumentAt };
}

// biome-ignore lint/suspicious/noExplicitAny: each shape's own arguments; precompiledShape's caller gives their types.
const byShape = new Map<string, (db: Database, ...args: any[]) => Promise<unknown[]>>();

/**
 * As `precompiledOnAny`, for a query whose text depends on more than its values (its table, columns, order, how
 * many values a list holds): one per `shape`, a key that names all of that. `build` is used the first time a
 * shape is asked for, so every build given for one shape must make the same query.
 */
export function precompiledShape<A extends Array<number | string>, R>(
  shape: string,
  build: (db: Database, ...args: A) => Compilable<R>,
): (db: Database, ...args: A) => Promise<R[]> {
  let run = byShape.get(shape);
  if (!run) {
    run = precompiledOnAny(build);
    byShape.set(shape, run);
  }
  return run as (db: Database, ...args: A) => Promise<R[]>;
}
