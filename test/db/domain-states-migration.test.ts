// Migration 0005_domain_states on a database that already holds domains: they become active and grandfathered,
// each with its own token and a first check within the hour; the counts, the search index and the ids carry on
// (SQLite rebuilds the table); and the name is no longer unique across accounts.

import { Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../server/db/database.js';
import { listPage } from '../../server/db/listing.js';
import { migrateToLatest, provider } from '../../server/db/migrations.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { DEFAULT_SCHEDULE } from '../../server/domains/check-rules.js';
import { domainRepository } from '../../server/domains/repository.js';
import { eventLog } from '../../server/events/outbox.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';

/** A change made outside any request, as a scheduled check's is. */
const NO_CAUSE = SYSTEM_CAUSE;

let database: TestDatabase;
let db: Database;

beforeAll(async () => {
  database = await freshDatabase();
  db = openDatabase(database.url);
});
afterAll(async () => {
  await db.destroy();
  await database.drop();
});

const LIST = { search: '', sortBy: 'id', sort: 'asc', perPage: 10, page: 1 } as const;

describe('0005_domain_states on existing domains', () => {
  it('makes them active and grandfathered, keeps counts, search and ids, and lets another account claim a name', async () => {
    const { error } = await new Migrator({ db, provider }).migrateTo('0004_counts_and_search');
    expect(error).toBeUndefined();
    const now = new Date().toISOString();
    const [owner, other] = (
      await db
        .insertInto('accounts')
        .values([
          { name: 'old-owner', created_at: now },
          { name: 'old-other', created_at: now },
        ])
        .returning('id')
        .execute()
    ).map((row) => Number(row.id)) as [number, number];
    const names = ['shop.example.com', 'blog.example.org', 'gone.example.net'];
    // The rows as migration 0004 knew them (the columns of later migrations did not exist yet).
    const rows = names.map((name) => ({ account_id: owner, name, name_key: name, created_at: now, updated_at: now }));
    const ids = (
      await db
        .insertInto('domains')
        .values(rows as never)
        .returning('id')
        .execute()
    ).map((r) => Number(r.id));
    await db
      .deleteFrom('domains')
      .where('id', '=', ids[2] ?? 0)
      .execute();

    await migrateToLatest(db);

    const repository = domainRepository(
      db,
      DEFAULT_SCHEDULE,
      eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)),
    );
    const shop = await repository.find(owner, ids[0] ?? 0);
    expect(shop?.record).toMatchObject({
      name: 'shop.example.com',
      status: 'active',
      verification: { type: 'txt', name: '_dss-challenge.shop.example.com' },
      observation: { code: 'grandfathered' },
      verified_at: null,
      last_checked_at: null,
    });
    const blog = await repository.find(owner, ids[1] ?? 0);
    expect(blog?.record.verification.value).not.toBe(shop?.record.verification.value);
    const firstCheck = Date.parse(shop?.record.next_check_at ?? '');
    expect(firstCheck).toBeGreaterThanOrEqual(Date.parse(now));
    expect(firstCheck).toBeLessThanOrEqual(Date.now() + 3_600_000);

    // Counts and the trigram search carry on through writes made after the migration.
    const added = await repository.create(
      owner,
      {
        name: 'shopping.example.com',
        index_page: null,
        not_found_page: null,
      },
      NO_CAUSE,
    );
    expect(added.record.id).toBeGreaterThan(ids[2] ?? 0);
    expect((await listPage(db, 'domains', owner, LIST)).total).toBe(3);
    const found = await listPage(db, 'domains', owner, { ...LIST, search: 'shop' });
    expect(found.rows.map((row) => row.name)).toEqual(['shop.example.com', 'shopping.example.com']);

    // The name held active by its owner is refused elsewhere; a pending one is not.
    await expect(
      repository.create(other, { name: 'shop.example.com', index_page: null, not_found_page: null }, NO_CAUSE),
    ).rejects.toThrow(/held/);
    const claimed = await repository.create(
      other,
      {
        name: 'shopping.example.com',
        index_page: null,
        not_found_page: null,
      },
      NO_CAUSE,
    );
    expect(claimed.record.status).toBe('pending');
  });
});
