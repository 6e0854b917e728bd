// Once per vitest run (every leg, the quick loop too): names the run for its worker processes, and when the run
// ends drops the migrated templates its PostgreSQL databases were copied from (test/support/database.ts).
import { admin, engine, TEMPLATE_PREFIX } from './support/database.js';

export function setup(): void {
  process.env.DSS_TEST_RUN = String(process.pid);
}

export async function teardown(): Promise<void> {
  if (engine !== 'postgres') return;
  const prefix = TEMPLATE_PREFIX.replace(/_/g, '\\_');
  await admin(async (client) => {
    const { rows } = await client.query<{ datname: string }>('select datname from pg_database where datname like $1', [
      `${prefix}%`,
    ]);
    for (const { datname } of rows) await client.query(`drop database if exists ${datname} with (force)`);
  });
}
