// The opaque `after` cursor of a list walk: the sort it belongs to, how many records the walk has returned,
// and the sort key of the last one, as a small JSON array; sealed with AES-256-GCM where a link carrying it is
// built (pagination.ts, id-cursor.ts), so that a cursor in a URL, a log or a proxy says nothing of the records, and
// one not made here is refused.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { ListPosition, ListQuery } from '../../db/listing.js';
import type { FieldFormat } from '../../formats.js';
import { fieldProblem, type HttpProblem } from '../problems/problem.js';

export interface WalkPoint {
  /** Records the walk returned before this point. */
  walked: number;
  position: ListPosition;
}

export type Sorting = Pick<ListQuery, 'sortBy' | 'sort'>;

/** The spec's `list-cursor` format: what a cursor can look like; whether it is one of ours, decodeCursor says. */
export const cursorFormats: Record<string, FieldFormat> = {
  'list-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]*$/.test(value),
    message: 'must be a cursor from links.next (letters, digits, - and _), or empty to start a walk',
  },
};

export function encodeCursor(sorting: Sorting, point: WalkPoint): string {
  const { id, nameKey } = point.position;
  const fields = [sorting.sortBy, sorting.sort, point.walked, id, ...(sorting.sortBy === 'name' ? [nameKey] : [])];
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

const NOT_OURS = 'is not a cursor this service made: take it from links.next, or send it empty to start';
const notOurs = () =>
  fieldProblem(
    'invalid-cursor',
    [{ location: 'query', field: 'after', message: NOT_OURS }],
    'The cursor in after is not one this service made.',
  );

/** What an unopenable cursor is replaced with: no JSON, so decodeCursor refuses it as not ours. */
export const NOT_A_CURSOR = '-';
const KEY_INFO = 'dss list cursor v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Seals a cursor (with a key already at hand: sealing is then a few microseconds of plain computation). */
export type Seal = (cursor: string) => string;

export interface CursorSeal {
  /** The sealing function, once the key is known (asked for on the first call). */
  sealer(): Promise<Seal>;
  /**
   * The cursor inside; NOT_A_CURSOR when it was not sealed with this key or was changed, for decodeCursor to
   * refuse (after listQueryOf's own checks of the parameters).
   */
  open(sealed: string): Promise<string>;
}

/**
 * Seals cursors with a key derived from `secret` (CURSOR_KEY, or the database's own: db/service-secrets.ts),
 * asked for when a cursor is first sealed or opened (a start does not wait on the database), again after a
 * failure: AES-256-GCM with a random nonce, base64url of nonce, ciphertext and tag.
 */
export function cursorSeal(secret: () => Promise<Buffer>): CursorSeal {
  let pending: Promise<Buffer> | undefined;
  const keyOf = () => {
    pending ??= secret().then((bytes) => Buffer.from(hkdfSync('sha256', bytes, Buffer.alloc(0), KEY_INFO, 32)));
    pending.catch(() => {
      pending = undefined;
    });
    return pending;
  };
  const nonce = noncePool(IV_BYTES);
  const sealWith =
    (key: Buffer): Seal =>
    (cursor) => {
      const iv = nonce();
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([iv, cipher.update(cursor, 'utf8'), cipher.final(), cipher.getAuthTag()]);
      return sealed.toString('base64url');
    };
  let sealer: Seal | undefined;
  return {
    async sealer() {
      sealer ??= sealWith(await keyOf());
      return sealer;
    },
    async open(sealed) {
      const key = await keyOf();
      const bytes = Buffer.from(sealed, 'base64url');
      if (bytes.length <= IV_BYTES + TAG_BYTES) return NOT_A_CURSOR;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        const inner = bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES);
        return Buffer.concat([decipher.update(inner), decipher.final()]).toString('utf8');
      } catch {
        return NOT_A_CURSOR;
      }
    },
  };
}

/** Nonces drawn per block of this many: each a seal's. */
const NONCES_PER_BLOCK = 256;

/**
 * Random nonces of `size` bytes, each handed out once, drawn from the system's generator a block at a time: a
 * call to it cost about 15 µs of a list's CPU per request, as much as the rest of the seal.
 */
function noncePool(size: number): () => Buffer {
  let block = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at + size > block.length) {
      block = randomBytes(size * NONCES_PER_BLOCK);
      at = 0;
    }
    at += size;
    return block.subarray(at - size, at);
  };
}

/** The walk point of a cursor sent with `sorting`, or the problem naming `after` when it is not one of ours or not for this sort. */
export function readCursor(cursor: string, sorting: Sorting): WalkPoint | HttpProblem {
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    fields = undefined;
  }
  const [sortBy, sort, walked, id, nameKey] = Array.isArray(fields) ? fields : [];
  const byName = sortBy === 'name';
  const wellFormed =
    (sortBy === 'id' || byName) &&
    (sort === 'asc' || sort === 'desc') &&
    Number.isSafeInteger(walked) &&
    walked >= 0 &&
    Number.isSafeInteger(id) &&
    id >= 1 &&
    (byName ? typeof nameKey === 'string' : nameKey === undefined) &&
    (fields as unknown[]).length === (byName ? 5 : 4);
  if (!wellFormed) return notOurs();
  if (sortBy !== sorting.sortBy || sort !== sorting.sort) {
    const message = `belongs to a walk with sort_by=${sortBy}&sort=${sort}; send the same sort_by and sort`;
    return fieldProblem(
      'cursor-sort-mismatch',
      [{ location: 'query', field: 'after', message }],
      'The cursor in after belongs to a walk in another order.',
    );
  }
  return { walked, position: { id, nameKey: byName ? nameKey : '' } };
}

/** readCursor's walk point; its problem thrown (the validation step has refused such a cursor before any handler). */
export function decodeCursor(cursor: string, sorting: Sorting): WalkPoint {
  const read = readCursor(cursor, sorting);
  if (!('walked' in read)) throw read;
  return read;
}
