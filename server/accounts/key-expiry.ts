// A key's expiry is a time passing, not a request: this job notices each key that reached its expires_at (or
// the end of its rotation's overlap) and writes its api_key.expired event (actor: the system), once, whichever
// process gets there first. A revoked key's end is its api_key.revoked.
import type { Database } from '../db/database.js';
import { inTransaction, SYSTEM_CAUSE } from '../db/owned.js';
import { type EventSubscriber, recordEvent } from '../events/outbox.js';
import type { Job } from '../jobs/runner.js';
import { keyRecord } from './key-management.js';

/** How often the job looks: an expiry is told within this much. */
export const KEY_EXPIRY_POLL_MS = 30_000;
const BATCH = 100;

/**
 * Notes up to `limit` keys that expired and were not noted yet, writing each one's event in the transaction that
 * notes it; how many. The update claims each row (a second process's update finds it noted and skips it).
 */
export async function noteExpiredKeys(db: Database, subscriber: EventSubscriber, limit = BATCH): Promise<number> {
  return inTransaction(db, async (trx) => {
    const now = new Date().toISOString();
    const due = trx
      .selectFrom('api_keys')
      .select('id')
      .where('expiry_noted_at', 'is', null)
      .where('expires_at', '<=', now)
      .where('revoked_at', 'is', null)
      .limit(limit);
    const noted = await trx
      .updateTable('api_keys')
      .set({ expiry_noted_at: now })
      .where('id', 'in', due)
      .where('expiry_noted_at', 'is', null)
      .returning(['account_id', 'public_id'])
      .execute();
    for (const key of noted) {
      const accountId = Number(key.account_id);
      const record = await keyRecord(trx, accountId, key.public_id);
      if (!record) continue;
      await recordEvent(
        trx,
        { accountId, type: 'api_key.expired', data: { object: record }, cause: SYSTEM_CAUSE },
        subscriber,
      );
    }
    return noted.length;
  });
}

/** The job: a pass when due, and again at once while a pass found a full batch. */
export function keyExpiryJob(db: Database, subscriber: EventSubscriber, pollMs = KEY_EXPIRY_POLL_MS): Job<true> {
  return {
    name: 'key-expiry',
    concurrency: 1,
    wakeOn: [],
    pollMs,
    async claim() {
      return (await noteExpiredKeys(db, subscriber)) === BATCH ? [true] : [];
    },
    async run() {},
  };
}
