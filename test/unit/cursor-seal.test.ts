// Sealed cursors: what one key seals only that key opens, and any change to a sealed cursor makes it unopenable.
import { describe, expect, it } from 'vitest';
import { cursorSeal, NOT_A_CURSOR } from '../../server/http/cursor.js';

const seal = cursorSeal(Buffer.from('a secret of at least thirty-two characters'));
const other = cursorSeal(Buffer.from('another secret of thirty-two characters!'));
const CURSOR = Buffer.from('["name","asc",10,9,"alice confidential 9"]').toString('base64url');

describe('cursorSeal', () => {
  it('opens what it sealed, and seals the same cursor differently each time', () => {
    const sealed = seal.seal(CURSOR);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(seal.open(sealed)).toBe(CURSOR);
    expect(seal.seal(CURSOR)).not.toBe(sealed);
  });

  it.each([
    ['sealed with another key', () => other.seal(CURSOR)],
    ['unsealed', () => CURSOR],
    ['empty of ciphertext', () => Buffer.alloc(28).toString('base64url')],
    ['short', () => 'AAAA'],
    ['with its last character changed', () => seal.seal(CURSOR).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'))],
    ['with its first character changed', () => seal.seal(CURSOR).replace(/^./, (c) => (c === 'A' ? 'B' : 'A'))],
  ])('does not open a cursor %s', (_, make) => {
    expect(seal.open(make())).toBe(NOT_A_CURSOR);
  });
});
