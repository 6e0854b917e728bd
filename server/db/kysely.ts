// kysely's runtime, loaded as CommonJS. Its ES module build is some 400 files, and under tsx every one of
// them goes through tsx's module hooks: about a second of CPU at start-up, against a quarter of that through
// require. Import kysely's values from here (types may still come from 'kysely'), so one copy is loaded.
import { createRequire } from 'node:module';
import type * as K from 'kysely';

const kysely = createRequire(import.meta.url)('kysely') as typeof K;

export const {
  DEFAULT_MIGRATION_TABLE,
  DeleteQueryNode,
  InsertQueryNode,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SelectQueryNode,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  UpdateQueryNode,
} = kysely;
export const Kysely = kysely.Kysely;
export type Kysely<DB> = K.Kysely<DB>;
