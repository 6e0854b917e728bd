// Persistence of Idempotency-Keys. A key is claimed with a pending row in its own short statement (so a
// concurrent repeat, in this process or another, sees it and gets 409), then completed in the transaction that
// creates the record, so a record never exists without its saved answer, nor a saved answer without its record.
import { randomUUID } from 'node:crypto';
import { type Database, isUniqueViolation, type PruneBatch, toIso } from '../db/database.js';

/** How long a key and its answer are kept. */
export const KEY_RETENTION_MS = 24 * 60 * 60 * 1000;
/** A pending key older than this was left by a request that died (a crash); a repeat may take it over. */
export const LOCK_TIMEOUT_MS = 30_000;

export interface SavedAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export type Claim =
  | { kind: 'claimed'; token: string }
  | { kind: 'saved'; answer: SavedAnswer }
  | { kind: 'other-payload' }
  | { kind: 'in-progress' };

/** The pending key was taken over (after LOCK_TIMEOUT_MS) or deleted: the request must not commit. */
export class LostKeyError extends Error {
  constructor() {
    super('the Idempotency-Key was taken over by another request');
  }
}

export function idempotencyKeys(db: Database) {
  return {
    /** Claims `key` for a request with this fingerprint, or says what became of an earlier one. */
    async claim(accountId: number, key: string, fingerprint: string): Promise<Claim> {
      const now = Date.now();
      for (let attempt = 0; attempt < 3; attempt++) {
        const token = randomUUID();
        const at = new Date(now).toISOString();
        try {
          await db
            .insertInto('idempotency_keys')
            .values({ account_id: accountId, key, fingerprint, lock_token: token, locked_at: at, created_at: at })
            .execute();
          return { kind: 'claimed', token };
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
        }
        const row = await db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .executeTakeFirst();
        if (!row) continue;
        const createdAt = toIso(row.created_at);
        if (Date.parse(createdAt) < now - KEY_RETENTION_MS) {
          // Expired but not purged yet: as good as absent.
          await db
            .deleteFrom('idempotency_keys')
            .where('account_id', '=', accountId)
            .where('key', '=', key)
            .where('created_at', '=', createdAt)
            .execute();
          continue;
        }
        if (row.fingerprint !== fingerprint) return { kind: 'other-payload' };
        if (row.status !== null) {
          return {
            kind: 'saved',
            answer: {
              status: Number(row.status),
              headers: JSON.parse(row.headers ?? '{}') as Record<string, string>,
              body: row.body === null ? undefined : JSON.parse(row.body),
            },
          };
        }
        if (row.locked_at !== null && Date.parse(toIso(row.locked_at)) > now - LOCK_TIMEOUT_MS) {
          return { kind: 'in-progress' };
        }
        // Left pending by a request that died: take it over, unless another repeat just did.
        const taken = await db
          .updateTable('idempotency_keys')
          .set({ lock_token: token, locked_at: at })
          .where('account_id', '=', accountId)
          .where('key', '=', key)
          .where('status', 'is', null)
          .where('lock_token', row.lock_token === null ? 'is' : '=', row.lock_token)
          .executeTakeFirst();
        if (taken.numUpdatedRows > 0n) return { kind: 'claimed', token };
      }
      return { kind: 'in-progress' };
    },

    /**
     * Saves the answer of a claimed key. Run it in the transaction that wrote the record; throws LostKeyError
     * (which rolls the record back) when the key is no longer this request's.
     */
    async complete(accountId: number, key: string, token: string, answer: SavedAnswer): Promise<void> {
      const result = await db
        .updateTable('idempotency_keys')
        .set({
          status: answer.status,
          headers: JSON.stringify(answer.headers),
          body: answer.body === undefined ? null : JSON.stringify(answer.body),
          lock_token: null,
          locked_at: null,
        })
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .where('lock_token', '=', token)
        .where('status', 'is', null)
        .executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw new LostKeyError();
    },

    /** Frees a claimed key whose request failed without an answer worth keeping, so a retry runs again. */
    async release(accountId: number, key: string, token: string): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('account_id', '=', accountId)
        .where('key', '=', key)
        .where('lock_token', '=', token)
        .where('status', 'is', null)
        .execute();
    },
  };
}

export type IdempotencyKeys = ReturnType<typeof idempotencyKeys>;

/**
 * Deletes up to `batchSize` keys (with their saved answers) made before `before` (KEY_RETENTION_MS ago, as a
 * rule), oldest first, in one statement through the `idempotency_keys_created_at` index; how many.
 */
export async function pruneIdempotencyKeys(db: Database, { before, batchSize }: PruneBatch): Promise<number> {
  const due = db
    .selectFrom('idempotency_keys')
    .select(['account_id', 'key'])
    .where('created_at', '<', before.toISOString())
    .orderBy('created_at')
    .limit(batchSize);
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) => eb(eb.refTuple('account_id', 'key'), 'in', due.$asTuple('account_id', 'key')))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
