// The scenarios `npm run bench` and `npm run bench:profile` send, and the database they are sent to: a fresh SQLite
// file with a reader's account of SEEDED spaces and a writer's, and for a delete the spaces it takes one each.
import { issueKey } from '../../server/accounts/keys.js';
import { openDatabase } from '../../server/db/database.js';
import { migrateToLatest } from '../../server/db/migrations.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { eventLog } from '../../server/events/outbox.js';
import { spaceRepository } from '../../server/spaces/repository.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import type { LoadRequest } from './load.js';

export const SEEDED = 200;

export const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };
/**
 * Reads go to one account with SEEDED spaces; writes to another, so stores do not grow the lists read. A scenario
 * with `{id}` in its path gives each request a space of its own, seeded before each measurement (TO_DELETE).
 */
export const SCENARIOS = [
  { name: 'show', method: 'GET', path: '/spaces/7', writer: false },
  { name: 'list', method: 'GET', path: '/spaces', writer: false },
  { name: 'search', method: 'GET', path: '/spaces?search=ace%201', writer: false },
  { name: 'name-sort', method: 'GET', path: '/spaces?sort_by=name&sort=asc', writer: false },
  { name: 'store', method: 'POST', path: '/spaces', body: 'name=Bench+space&color=3', writer: true },
  { name: 'update', method: 'PATCH', path: '/spaces/1', body: 'name=Renamed+space&color=4', writer: true },
  { name: 'delete', method: 'DELETE', path: '/spaces/{id}', writer: true },
  { name: 'events', method: 'GET', path: '/events', writer: false },
] as const;
/** Spaces seeded before each measurement of a scenario with `{id}`: more than any target deletes in one. */
export const TO_DELETE = 60_000;
export type ScenarioName = (typeof SCENARIOS)[number]['name'];
export type Scenario = (typeof SCENARIOS)[number];
export type BenchKeys = Awaited<ReturnType<typeof seed>>;

/** The load of `scenario` against a target whose API is at `base`, with the key of the account it reads or writes. */
export function scenarioLoad(
  scenario: Scenario,
  base: string,
  keys: BenchKeys,
  load: { connections: number; duration: number; firstId?: number },
): LoadRequest {
  return {
    url: `${base}${scenario.path}`,
    method: scenario.method,
    headers: {
      Authorization: `Bearer ${scenario.writer ? keys.writer : keys.reader}`,
      ...('body' in scenario ? FORM : {}),
    },
    body: 'body' in scenario ? scenario.body : undefined,
    ...load,
  };
}

/**
 * A fresh database with the two accounts and their keys; the reader owns SEEDED spaces (and their events), the
 * writer one.
 */
export async function seed(file: string): Promise<{ reader: string; writer: string; writerAccount: number }> {
  const db = openDatabase(`sqlite:${file}`);
  await migrateToLatest(db);
  const reader = await issueKey(db, 'bench-reader');
  const writer = await issueKey(db, 'bench-writer');
  const spaces = spaceRepository(db, eventLog('space', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)));
  const cause = SYSTEM_CAUSE;
  await spaces.create(writer.account.id, { name: 'Written space', color: 1 }, cause);
  for (let i = 0; i < SEEDED; i++) {
    await spaces.create(reader.account.id, { name: `Space ${i}`, color: (i % 6) + 1 }, cause);
  }
  await db.destroy();
  return { reader: reader.key, writer: writer.key, writerAccount: writer.account.id };
}

/**
 * `count` spaces of the account, written straight into the file in one transaction (the targets wait between
 * measurements), for a delete scenario to take one each; the first id.
 */
export function seedToDelete(file: string, accountId: number, count: number): number {
  const db = new (sqliteDriver())(file);
  try {
    db.pragma('busy_timeout = 5000');
    const now = new Date().toISOString();
    const insert = db.prepare(
      `with recursive n(i) as (select 1 union all select i + 1 from n where i < ?)
       insert into spaces (name, color, account_id, name_key, created_at, updated_at)
       select 'Space to delete', 2, ?, 'space to delete', ?, ? from n returning id`,
    );
    const ids = db.transaction(() => insert.all(count, accountId, now, now) as Array<{ id: number }>).immediate();
    return Math.min(...ids.map((row) => Number(row.id)));
  } finally {
    db.close();
  }
}
