// API keys: `dss_<public id>_<secret>`. The public id finds the row; only a SHA-256 of the secret is stored,
// and it is compared in constant time. Keys are issued by the `keys` command, never through the API.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { type Database, toIso } from '../db/database.js';
import { noteKeyUse } from './last-used.js';

const KEY_PATTERN = /^dss_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
// Compared against when no key has the public id, so that an unknown id costs the same as a wrong secret.
const DUMMY_HASH = Buffer.alloc(32);
const DUMMY_HEX = DUMMY_HASH.toString('hex');

export interface Account {
  id: number;
  name: string;
  /** The public id of the key that authenticated the request, where keys have one: its rate-limit counter. */
  keyId?: string;
}

export interface IssuedKey {
  key: string;
  publicId: string;
  account: Account;
}

export interface KeyListing {
  publicId: string;
  account: string;
  label: string | null;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** The account a key belongs to, or undefined for a malformed, unknown or revoked key. */
export async function authenticate(db: Database, key: string): Promise<Account | undefined> {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, publicId, secret] = match as unknown as [string, string, string];
  return noted(db, publicId, verify(await findKey(db, publicId), secret));
}

interface KeyRow {
  account: Account;
  secretHash: Buffer;
  revoked: boolean;
}

/**
 * The key's row, read so that a known and an unknown public id cost the same: the id is the one row a query
 * always returns, left-joined to the key and its account (nulls for an unknown id), so both take the same index
 * probes and materialise the same columns.
 */
async function findKey(db: Database, publicId: string): Promise<KeyRow | undefined> {
  const row = await db
    .selectFrom(sql<{ wanted: string }>`(select cast(${publicId} as text) as wanted)`.as('q'))
    .leftJoin('api_keys', 'api_keys.public_id', 'q.wanted')
    .leftJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['accounts.id as account_id', 'accounts.name as account_name', 'secret_hash', 'revoked_at'])
    .executeTakeFirst();
  const secretHash = Buffer.from(row?.secret_hash ?? DUMMY_HEX, 'hex');
  return row?.account_id != null && row.account_name != null && row.secret_hash != null
    ? {
        account: { id: row.account_id, name: row.account_name, keyId: publicId },
        secretHash,
        revoked: row.revoked_at !== null,
      }
    : undefined;
}

function verify(row: KeyRow | undefined, secret: string): Account | undefined {
  const matches = timingSafeEqual(sha256(secret), row ? row.secretHash : DUMMY_HASH);
  return row && matches && !row.revoked ? row.account : undefined;
}

/** A key that authenticated is noted as used (written at most once a minute, see last-used.ts). */
function noted(db: Database, publicId: string, account: Account | undefined): Account | undefined {
  if (account) noteKeyUse(db, publicId);
  return account;
}

/** How long a process may go on accepting a key after it was revoked (by any process, e.g. the keys command). */
export const KEY_CACHE_TTL_MS = 500;
const KEY_CACHE_SIZE = 10_000;

/**
 * `authenticate` with the database asked at most once per KEY_CACHE_TTL_MS per valid key: only an active key is
 * kept (never an unknown or revoked one), found by a SHA-256 of the whole key, so that a wrong secret for a known
 * public id misses the cache and costs exactly what an unknown id costs. A revocation therefore takes effect on
 * every process within KEY_CACHE_TTL_MS.
 */
export function cachedAuthenticator(db: Database, ttlMs = KEY_CACHE_TTL_MS) {
  const cache = new Map<string, { account: Account; until: number }>();
  return async (key: string): Promise<Account | undefined> => {
    const match = KEY_PATTERN.exec(key);
    if (!match) return undefined;
    const [, publicId, secret] = match as unknown as [string, string, string];
    const now = performance.now();
    const keyHash = sha256(key).toString('base64');
    const cached = cache.get(keyHash);
    if (cached && cached.until > now) return noted(db, publicId, cached.account);
    const account = verify(await findKey(db, publicId), secret);
    if (account) {
      if (cache.size >= KEY_CACHE_SIZE) cache.clear();
      cache.set(keyHash, { account, until: now + ttlMs });
    } else {
      cache.delete(keyHash);
    }
    return noted(db, publicId, account);
  };
}

/** Issues a key for the named account, creating the account when it does not exist yet. */
export async function issueKey(db: Database, accountName: string, label: string | null = null): Promise<IssuedKey> {
  const publicId = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    await trx
      .insertInto('accounts')
      .values({ name: accountName, created_at: now })
      .onConflict((oc) => oc.column('name').doNothing())
      .execute();
    const account = await trx
      .selectFrom('accounts')
      .select(['id', 'name'])
      .where('name', '=', accountName)
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('api_keys')
      .values({
        public_id: publicId,
        account_id: account.id,
        label,
        secret_hash: sha256(secret).toString('hex'),
        created_at: now,
      })
      .execute();
    return { key: `dss_${publicId}_${secret}`, publicId, account };
  });
}

/** Revokes a key by its public id (or the whole key); false when no active key matches. */
export async function revokeKey(db: Database, keyOrPublicId: string): Promise<boolean> {
  const publicId = KEY_PATTERN.exec(keyOrPublicId)?.[1] ?? keyOrPublicId;
  const result = await db
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('public_id', '=', publicId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function listKeys(db: Database): Promise<KeyListing[]> {
  const rows = await db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select(['public_id', 'accounts.name as account', 'label', 'api_keys.created_at', 'revoked_at', 'last_used_at'])
    .orderBy('api_keys.id')
    .execute();
  return rows.map((row) => ({
    publicId: row.public_id,
    account: row.account,
    label: row.label,
    createdAt: toIso(row.created_at),
    revokedAt: row.revoked_at === null ? null : toIso(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : toIso(row.last_used_at),
  }));
}

export async function countKeys(db: Database): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
