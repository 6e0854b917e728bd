// Schema migrations, kept in code and applied in order at start-up (and by the keys command).
import { type Kysely, type Migration, type MigrationProvider, Migrator, sql } from 'kysely';

const migrations: Record<string, Migration> = {
  '0001_initial': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        .addColumn('public_id', 'text', (c) => c.notNull().unique())
        .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('label', 'text')
        .addColumn('secret_hash', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();

      for (const table of ['domains', 'spaces'] as const) {
        let builder = db.schema
          .createTable(table)
          .addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
          .addColumn('account_id', 'integer', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
          .addColumn('name', 'text', (c) => (table === 'domains' ? c.notNull().unique() : c.notNull()))
          .addColumn('name_key', 'text', (c) => c.notNull());
        builder =
          table === 'domains'
            ? builder.addColumn('index_page', 'text').addColumn('not_found_page', 'text')
            : builder.addColumn('color', 'integer', (c) => c.notNull().check(sql`color between 1 and 6`));
        await builder
          .addColumn('created_at', 'text', (c) => c.notNull())
          .addColumn('updated_at', 'text', (c) => c.notNull())
          .execute();
        // Every list is one account's records, sorted by id or by name with id as the tie-breaker.
        await db.schema.createIndex(`${table}_account_id`).on(table).columns(['account_id', 'id']).execute();
        await db.schema
          .createIndex(`${table}_account_name`)
          .on(table)
          .columns(['account_id', 'name_key', 'id'])
          .execute();
      }
    },
  },
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Applies every pending migration; throws with the failing migration's error. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run on any schema; kysely's Migrator takes Kysely<any>.
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const { error, results } = await new Migrator({ db, provider }).migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`Database migration ${failed} failed: ${error instanceof Error ? error.message : error}`);
  }
}
