// Sealed cursors: what one key seals only that key opens, and any change to a sealed cursor makes it unopenable.
import { describe, expect, it } from 'vitest';
import { cursorSeal, NOT_A_CURSOR } from '../../server/http/conventions/cursor.js';

const seal = cursorSeal(async () => Buffer.from('a secret of at least thirty-two characters'));
const other = cursorSeal(async () => Buffer.from('another secret of thirty-two characters!'));
const CURSOR = Buffer.from('["name","asc",10,9,"alice confidential 9"]').toString('base64url');

describe('cursorSeal', () => {
  it('opens what it sealed, and seals the same cursor differently each time', async () => {
    const sealed = (await seal.sealer())(CURSOR);
    expect(sealed).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(await seal.open(sealed)).toBe(CURSOR);
    expect((await seal.sealer())(CURSOR)).not.toBe(sealed);
  });

  it('gives every seal a nonce of its own, across the blocks its nonces are drawn in', async () => {
    const sealer = await seal.sealer();
    const sealed = Array.from({ length: 1_000 }, () => sealer(CURSOR));
    const nonces = new Set(sealed.map((each) => Buffer.from(each, 'base64url').subarray(0, 12).toString('hex')));
    expect(nonces.size).toBe(sealed.length);
    for (const each of [sealed[0], sealed[255], sealed[256], sealed[999]]) {
      expect(await seal.open(each as string)).toBe(CURSOR);
    }
  });

  it('asks for its secret again after a failure', async () => {
    let asked = 0;
    const flaky = cursorSeal(async () => {
      asked++;
      if (asked === 1) throw new Error('database unavailable');
      return Buffer.from('a secret of at least thirty-two characters');
    });
    await expect(flaky.sealer().then((s) => s(CURSOR))).rejects.toThrow('database unavailable');
    expect(await seal.open(await flaky.sealer().then((s) => s(CURSOR)))).toBe(CURSOR);
    expect(asked).toBe(2);
  });

  it.each([
    ['sealed with another key', async () => (await other.sealer())(CURSOR)],
    ['unsealed', async () => CURSOR],
    ['empty of ciphertext', async () => Buffer.alloc(28).toString('base64url')],
    ['short', async () => 'AAAA'],
    [
      'with its last character changed',
      async () => (await seal.sealer())(CURSOR).replace(/.$/, (c: string) => (c === 'A' ? 'B' : 'A')),
    ],
    [
      'with its first character changed',
      async () => (await seal.sealer())(CURSOR).replace(/^./, (c: string) => (c === 'A' ? 'B' : 'A')),
    ],
  ])('does not open a cursor %s', async (_, make) => {
    expect(await seal.open(await make())).toBe(NOT_A_CURSOR);
  });
});
