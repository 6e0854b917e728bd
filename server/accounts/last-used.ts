// When each key was last used, kept cheaply: at most one write a minute per key, in the background. The
// request never waits for it and never fails because of it; `keys list` shows the result.
import type { Database } from '../db/database.js';

/** How stale `last_used_at` may be: a key used all day costs one write a minute, not one per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

// Per database (tests run several in one process): public id -> when its last_used_at was last written.
const written = new WeakMap<Database, Map<string, number>>();

/** Notes that the key authenticated a request now; writes it only when the last write is a minute old. */
export function noteKeyUse(db: Database, publicId: string, now = Date.now()): void {
  const keys = written.get(db) ?? new Map<string, number>();
  written.set(db, keys);
  const last = keys.get(publicId);
  if (last !== undefined && now - last < LAST_USED_RESOLUTION_MS) return;
  keys.set(publicId, now);
  db.updateTable('api_keys')
    .set({ last_used_at: new Date(now).toISOString() })
    .where('public_id', '=', publicId)
    .execute()
    // A failed write (the database closing, a lock) only leaves last_used_at older; the next use retries.
    .catch(() => keys.delete(publicId));
}
