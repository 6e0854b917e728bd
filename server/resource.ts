// What a resource module (server/<resource>/index.ts) gives the app: the custom formats of its fields and the
// handlers of its operations. The app registers each module with one line; see `resources` in app.ts.
import type { Database } from './db/database.js';
import type { FieldFormat } from './formats.js';
import type { Handlers, OperationId } from './http/operations.js';

export interface Resource<K extends OperationId> {
  /** The spec's custom `format`s that this resource's fields use (start-up fails on one nobody validates). */
  formats: Record<string, FieldFormat>;
  handlers(db: Database): Pick<Handlers, K>;
}

type AnyResource = { formats: Record<string, FieldFormat>; handlers(db: Database): Partial<Handlers> };
type OperationsOf<R> = R extends Resource<infer K> ? K : never;

/**
 * The registered modules' handlers, on `db`. It only type-checks when together they handle every operation of
 * the spec, so a new operation or a forgotten module does not compile.
 */
export function registerResources<const R extends readonly AnyResource[]>(
  db: Database,
  modules: R,
  // Empty when every operation has a module; otherwise the compiler asks for the missing operations' names.
  ..._missingOperations: [Exclude<OperationId, OperationsOf<R[number]>>] extends [never]
    ? []
    : [Exclude<OperationId, OperationsOf<R[number]>>]
): Handlers {
  return Object.assign({}, ...modules.map((module) => module.handlers(db)));
}

/** The custom formats of the modules' fields, merged. */
export function formatsOf(modules: readonly AnyResource[]): Record<string, FieldFormat> {
  return Object.assign({}, ...modules.map((module) => module.formats));
}
