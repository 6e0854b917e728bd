// API keys: `dss_<public id>_<secret>`. The public id finds the row; only a SHA-256 of the secret is stored,
// and it is compared in constant time. The rows' reads and writes; what making, rotating and revoking a key
// means (its rules and its events) is key-management.ts's, shared by the keys command and the API.
import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { type Database, lockedForUpdate, toIso } from '../db/database.js';
import { type KeyPolicy, policyOf } from './key-policy.js';
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
  /** What the key may do (scopes, expiry, address ranges); undefined: anything, from anywhere, for ever. */
  policy?: KeyPolicy;
}

/** What a new key may do, beside its account and label (none of it: everything, as keys always could). */
export interface KeyOptions {
  label?: string | null;
  /** Scope names (key-policy.ts); undefined: every scope. */
  scopes?: readonly string[];
  expiresAt?: Date;
  /** CIDR ranges as parseRange wrote them. */
  allowedIps?: readonly string[];
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
  /** null: every scope. */
  scopes: string[] | null;
  expiresAt: string | null;
  allowedIps: string[] | null;
  /** The key that replaced it (`keys rotate`), and when that key was made (the start of the overlap). */
  replacedBy: string | null;
  replacedAt: string | null;
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
    .select([
      'accounts.id as account_id',
      'accounts.name as account_name',
      'secret_hash',
      'revoked_at',
      'scopes',
      'expires_at',
      'allowed_ips',
      'replaced_by',
    ])
    .executeTakeFirst();
  const secretHash = Buffer.from(row?.secret_hash ?? DUMMY_HEX, 'hex');
  return row?.account_id != null && row.account_name != null && row.secret_hash != null
    ? {
        account: {
          id: row.account_id,
          name: row.account_name,
          keyId: publicId,
          policy: policyOf({
            scopes: row.scopes ?? null,
            expires_at: row.expires_at ?? null,
            allowed_ips: row.allowed_ips ?? null,
            replaced_by: row.replaced_by ?? null,
          }),
        },
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
    // One call, no Hash object: this runs on every request.
    const keyHash = hash('sha256', key, 'base64');
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

/**
 * Issues a key for the named account, creating the account when it does not exist yet. A label alone (the
 * form callers used before keys had options) is a key that may do everything.
 */
/**
 * When `name` would be a new account: the existing accounts whose name differs from it only by letter case (`Acme`
 * for `acme`; on SQLite, ASCII letters only), far more likely a typo of theirs than a tenant of its own. Empty when
 * the account exists as written, or nothing is alike.
 */
export async function accountsDifferingByCase(db: Database, name: string): Promise<string[]> {
  const rows = await db
    .selectFrom('accounts')
    .select('name')
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .limit(6)
    .execute();
  const names = rows.map((row) => row.name);
  return names.includes(name) ? [] : names;
}

export async function issueKey(
  db: Database,
  accountName: string,
  options: KeyOptions | string | null = {},
): Promise<IssuedKey> {
  const given = typeof options === 'object' && options !== null ? options : { label: options };
  return db.transaction().execute((trx) => insertKey(trx, accountName, given));
}

/** Inserts a key (and its account when new) in `trx`; the whole key is returned, never stored. */
export async function insertKey(
  trx: Database,
  accountName: string,
  options: KeyOptions,
  now = new Date().toISOString(),
): Promise<IssuedKey> {
  const publicId = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  await trx
    .insertInto('accounts')
    .values({ name: accountName, created_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const account = await trx
    .selectFrom('accounts')
    .select(['id', 'name'])
    .where('name', '=', accountName)
    .executeTakeFirstOrThrow()
    .then((row) => ({ id: Number(row.id), name: row.name }));
  await trx
    .insertInto('api_keys')
    .values({
      public_id: publicId,
      account_id: account.id,
      label: options.label ?? null,
      secret_hash: sha256(secret).toString('hex'),
      created_at: now,
      scopes: options.scopes ? options.scopes.join(' ') : null,
      expires_at: options.expiresAt ? options.expiresAt.toISOString() : null,
      allowed_ips: options.allowedIps?.length ? options.allowedIps.join(',') : null,
    })
    .execute();
  return { key: `dss_${publicId}_${secret}`, publicId, account };
}

export type Rotation =
  | { rotated: IssuedKey; oldKeyExpiresAt: string; oldPublicId: string }
  | { refused: 'unknown' | 'revoked' | 'expired' | 'rotated'; detail?: string }
  | { refused: 'exceeds'; exceeds: string[] };

/** What a rotation may be bounded by: the account it must be in, a check of the successor, work in its transaction. */
export interface RotationRules {
  /** Only a key of this account (another's is `unknown`). */
  accountId?: number;
  /** What the successor would exceed (empty: nothing), judged before it is made. */
  check?: (successor: KeyOptions, successorExpiry: number | undefined) => string[];
  /** Runs in the rotation's transaction once it is done (its events). */
  whenRotated?: (trx: Database, rotation: { rotated: IssuedKey; oldPublicId: string }) => Promise<void>;
}

/**
 * Issues a successor of an active key (same account, label, scopes and ranges; the same lifetime from now, when
 * the old key had one) and makes the old key expire `overlapMs` from now (or when it expired anyway, if sooner).
 * One transaction, the old key's row locked (PostgreSQL; SQLite's transaction is exclusive) and claimed by its
 * update, so two rotations of one key make one successor and the other is refused as `rotated`.
 */
export async function rotateKey(
  db: Database,
  keyOrPublicId: string,
  overlapMs: number,
  rules: RotationRules = {},
): Promise<Rotation> {
  const publicId = KEY_PATTERN.exec(keyOrPublicId)?.[1] ?? keyOrPublicId;
  return db.transaction().execute(async (trx): Promise<Rotation> => {
    let query = trx
      .selectFrom('api_keys')
      .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
      .select([
        'accounts.name as account',
        'accounts.id as account_id',
        'label',
        'scopes',
        'expires_at',
        'allowed_ips',
        'revoked_at',
        'replaced_by',
        'api_keys.created_at',
      ])
      .where('public_id', '=', publicId);
    if (rules.accountId !== undefined) query = query.where('api_keys.account_id', '=', rules.accountId);
    const old = await lockedForUpdate(trx, query).executeTakeFirst();
    if (!old) return { refused: 'unknown' };
    if (old.revoked_at !== null) return { refused: 'revoked', detail: toIso(old.revoked_at) };
    if (old.replaced_by !== null) return { refused: 'rotated', detail: old.replaced_by };
    const nowMs = Date.now();
    const oldExpiry = old.expires_at === null ? undefined : new Date(old.expires_at).getTime();
    if (oldExpiry !== undefined && oldExpiry <= nowMs)
      return { refused: 'expired', detail: toIso(old.expires_at as string) };
    const lifetime = oldExpiry === undefined ? undefined : oldExpiry - new Date(old.created_at).getTime();
    const now = new Date(nowMs).toISOString();
    const successor: KeyOptions = {
      label: old.label,
      ...(old.scopes !== null ? { scopes: old.scopes.split(' ').filter(Boolean) } : {}),
      ...(lifetime !== undefined ? { expiresAt: new Date(nowMs + lifetime) } : {}),
      ...(old.allowed_ips ? { allowedIps: old.allowed_ips.split(',') } : {}),
    };
    const exceeds = rules.check?.(successor, successor.expiresAt?.getTime()) ?? [];
    if (exceeds.length > 0) return { refused: 'exceeds', exceeds };
    const rotated = await insertKey(trx, old.account, successor, now);
    const end = Math.min(nowMs + overlapMs, oldExpiry ?? Number.POSITIVE_INFINITY);
    const claimed = await trx
      .updateTable('api_keys')
      .set({ replaced_by: rotated.publicId, expires_at: new Date(end).toISOString() })
      .where('public_id', '=', publicId)
      .where('replaced_by', 'is', null)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (claimed.numUpdatedRows === 0n)
      throw new Error(`Key ${publicId} changed while it was being rotated; run it again.`);
    await rules.whenRotated?.(trx, { rotated, oldPublicId: publicId });
    return { rotated, oldKeyExpiresAt: new Date(end).toISOString(), oldPublicId: publicId };
  });
}

/** The public id a key argument names: the id itself, or the id inside a whole key. */
export const publicIdIn = (keyOrPublicId: string): string => KEY_PATTERN.exec(keyOrPublicId)?.[1] ?? keyOrPublicId;

/**
 * Revokes a key by its public id (or the whole key), of `accountId` only when given; the account of the key
 * revoked, or undefined when no active key matches.
 */
export async function revokeKeyOf(
  db: Database,
  keyOrPublicId: string,
  accountId?: number,
): Promise<number | undefined> {
  let query = db
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('public_id', '=', publicIdIn(keyOrPublicId))
    .where('revoked_at', 'is', null);
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.returning('account_id').executeTakeFirst();
  return row && Number(row.account_id);
}

/** Revokes a key by its public id (or the whole key); false when no active key matches. */
export async function revokeKey(db: Database, keyOrPublicId: string): Promise<boolean> {
  return (await revokeKeyOf(db, keyOrPublicId)) !== undefined;
}

export async function listKeys(db: Database): Promise<KeyListing[]> {
  return keyListings(db, {});
}

/** What to read of one account's keys (accountKeys). */
export interface KeyQuery {
  limit?: number;
  /** After this row id (a cursor's). */
  before?: number;
  publicId?: string;
  /** Leave revoked keys out. */
  unrevoked?: boolean;
  /** Only labels holding this text (ASCII case-insensitive). */
  search?: string;
}

/** One account's keys, newest first, after the row id `before` (a cursor's), at most `limit`; or one by its id. */
export async function accountKeys(
  db: Database,
  accountId: number,
  query: KeyQuery,
): Promise<Array<KeyListing & { id: number }>> {
  return keyListings(db, { ...query, accountId });
}

async function keyListings(
  db: Database,
  where: {
    accountId?: number;
    limit?: number;
    before?: number;
    publicId?: string;
    unrevoked?: boolean;
    search?: string;
  },
): Promise<Array<KeyListing & { id: number }>> {
  let query = db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .leftJoin('api_keys as successor', 'successor.public_id', 'api_keys.replaced_by')
    .select([
      'api_keys.id',
      'api_keys.public_id',
      'accounts.name as account',
      'api_keys.label',
      'api_keys.created_at',
      'api_keys.revoked_at',
      'api_keys.last_used_at',
      'api_keys.scopes',
      'api_keys.expires_at',
      'api_keys.allowed_ips',
      'api_keys.replaced_by',
      'successor.created_at as replaced_at',
    ]);
  if (where.accountId === undefined) {
    query = query.orderBy('api_keys.id');
  } else {
    query = query.where('api_keys.account_id', '=', where.accountId).orderBy('api_keys.id', 'desc');
  }
  if (where.publicId !== undefined) query = query.where('api_keys.public_id', '=', where.publicId);
  if (where.before !== undefined) query = query.where('api_keys.id', '<', where.before);
  if (where.unrevoked) query = query.where('api_keys.revoked_at', 'is', null);
  if (where.search) {
    const pattern = `%${where.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(sql<boolean>`lower(api_keys.label) like ${pattern} escape '\\'`);
  }
  if (where.limit !== undefined) query = query.limit(where.limit);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: Number(row.id),
    publicId: row.public_id,
    account: row.account,
    label: row.label,
    createdAt: toIso(row.created_at),
    revokedAt: row.revoked_at === null ? null : toIso(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : toIso(row.last_used_at),
    scopes: row.scopes === null ? null : row.scopes.split(' ').filter(Boolean),
    expiresAt: row.expires_at === null ? null : toIso(row.expires_at),
    allowedIps: row.allowed_ips ? row.allowed_ips.split(',') : null,
    replacedBy: row.replaced_by,
    replacedAt: row.replaced_at == null ? null : toIso(row.replaced_at),
  }));
}

/** What a key's row says of it now: active, revoked, expired, rotating (in its overlap) or rotated (after it). */
export function keyStatus(
  key: KeyListing,
  now = Date.now(),
): 'active' | 'revoked' | 'expired' | 'rotating' | 'rotated' {
  if (key.revokedAt) return 'revoked';
  const over = key.expiresAt !== null && Date.parse(key.expiresAt) <= now;
  if (key.replacedBy) return over ? 'rotated' : 'rotating';
  return over ? 'expired' : 'active';
}

/** A rotated key used after its successor was made: some client still holds it. */
export function usedAfterRotation(key: KeyListing): boolean {
  return key.replacedAt !== null && key.lastUsedAt !== null && Date.parse(key.lastUsedAt) >= Date.parse(key.replacedAt);
}

export async function countKeys(db: Database): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
