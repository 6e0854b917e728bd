// Kysely queries built and compiled once, then run with each call's values: kysely otherwise builds and
// compiles a new query tree on every call, which costs more than the small queries of this API themselves.
import type { Compilable, CompiledQuery } from 'kysely';
import type { Database } from './database.js';

/** Stands for the build function's n-th argument while the query is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * Wraps `build` (whose arguments may only be used as values: where operands, inserted or set values, limits)
 * into a function that compiles it on first use and afterwards only substitutes the values.
 */
export function precompiled<A extends unknown[], R>(
  db: Database,
  build: (...args: A) => Compilable<R>,
): (...args: A) => Promise<R[]> {
  let compiled: CompiledQuery<R> | undefined;
  return async (...args) => {
    compiled ??= build(...(Array.from({ length: build.length }, (_, i) => new Slot(i)) as A)).compile();
    const parameters = compiled.parameters.map((value) => (value instanceof Slot ? args[value.index] : value));
    return (await db.executeQuery<R>({ ...compiled, parameters })).rows;
  };
}
