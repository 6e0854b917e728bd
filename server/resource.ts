// What a module of the API (server/<collection>/index.ts) gives the app: its name, the custom formats of its
// fields and the handlers of its operations. A resource module (records an account owns: domains, spaces) also
// gives example bodies and the sandbox's starting records. The registry (server/resources.ts) lists the
// modules, one line each; every other list of resources is derived from it.
import type { Database } from './db/database.js';
import type { FieldFormat } from './formats.js';
import type { Handlers, OperationId } from './http/routing/operations.js';

/** A request body as a form carries it: field names to values. */
export type ExampleBody = Record<string, string | number>;

/**
 * A collection of the API: `/<name>` and the operations below it. `S`: what its handlers need beyond the database
 * (settings, DNS lookups), which the app builds once from the configuration; each module names its own.
 */
export interface ApiModule<N extends string, K extends OperationId, S = Record<string, never>> {
  /** The collection's name: its path under the base path (`/<name>`) and its operationIds' prefix. */
  name: N;
  /** The spec's custom `format`s that this module's fields use (start-up fails on one nobody validates). */
  formats: Record<string, FieldFormat>;
  handlers: (db: Database, services: S) => Pick<Handlers, K>;
}

/** A collection of records an account owns, listed, counted and searched alike; its table has its name. */
export interface ResourceModule<N extends string, K extends OperationId, S = Record<string, never>>
  extends ApiModule<N, K, S> {
  /** Valid bodies of a store (its name begins with `tag`) and of an update (PUT and PATCH): fixtures for tests. */
  examples: { store(tag: string): ExampleBody; update(tag: string): ExampleBody };
  /** Stores the records a new sandbox account starts with; `tag` is unique to the account. */
  seed(db: Database, accountId: number, tag: string): Promise<void>;
}

type AnyModule<S> = Omit<ApiModule<string, never>, 'handlers'> & {
  handlers: (db: Database, services: S) => Partial<Handlers>;
};
type OperationsOf<R> = R extends ApiModule<string, infer K, infer _S> ? K : never;

/**
 * The modules' handlers merged into one map, on `db`. It only type-checks when together they handle every
 * operation of the spec, and `services` holds what each module asks for, so a new operation, a forgotten module
 * or a missing service does not compile.
 */
export function handlersOf<S, const R extends readonly AnyModule<S>[]>(
  db: Database,
  services: S,
  modules: R,
  // Empty when every operation has a module; otherwise the compiler asks for the missing operations' names.
  ..._missingOperations: [Exclude<OperationId, OperationsOf<R[number]>>] extends [never]
    ? []
    : [Exclude<OperationId, OperationsOf<R[number]>>]
): Handlers {
  return Object.assign({}, ...modules.map((module) => module.handlers(db, services)));
}

/** The custom formats of the modules' fields, merged. */
export function formatsOf(modules: readonly AnyModule<never>[]): Record<string, FieldFormat> {
  return Object.assign({}, ...modules.map((module) => module.formats));
}
