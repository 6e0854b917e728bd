// Secrets every instance on one database shares, made at the first start that needs one: random bytes stored
// once (the first insert wins, so instances starting together agree) and read back by every start after.
import { randomBytes } from 'node:crypto';
import type { Database } from './database.js';

/** The secret `name` of this database: 32 random bytes, made and stored when it has none yet. */
export async function serviceSecret(db: Database, name: string): Promise<Buffer> {
  const stored = () => db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirst();
  // Read first: a start on a database that already has it writes nothing (it may be read-only for now).
  let row = await stored();
  if (!row) {
    await db
      .insertInto('service_secrets')
      .values({ name, value: randomBytes(32).toString('base64url') })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    row = await stored();
  }
  if (!row) throw new Error(`the service secret "${name}" could not be stored`);
  return Buffer.from(row.value, 'base64url');
}
