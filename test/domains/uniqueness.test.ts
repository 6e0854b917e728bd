// Domain names are unique across the whole service: a second store of a name, in any spelling of it and by
// any account, answers 409; of many concurrent stores of one name exactly one succeeds.
import { describe, expect, it } from 'vitest';
import type { Encoding } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { countRows, rowOf, store } from './fixtures.js';

const { server, account: alice } = await serverForFile();
const bob = await server.account('bob');

const CONFLICT = '/problems/conflict';

describe('domains_store uniqueness', () => {
  const spellings: Array<[string, string, string, string]> = [
    ['the same name', 'same.example.com', 'same.example.com', 'same.example.com'],
    ['another case', 'case.example.com', 'CASE.Example.com', 'case.example.com'],
    ['a trailing dot', 'dot.example.com', 'dot.example.com.', 'dot.example.com'],
    ['punycode after Unicode', 'bücher.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
    ['Unicode after punycode', 'xn--rger-koa.de', 'ärger.de', 'xn--rger-koa.de'],
    ['upper-case Unicode after lower-case', 'straße.example', 'STRAßE.example', 'xn--strae-oqa.example'],
  ];

  // Each describe stores its names under its own first label, so that both can make their first store.
  describe.each([
    ['the same account', 'own', () => alice],
    ['another account', 'other', () => bob],
  ])('by %s', (_who, prefix, second) => {
    it.each(spellings)('answers 409 for %s and keeps the first domain', async (_case, first, again, stored) => {
      const original = await store(alice, 'form', { name: `${prefix}.${first}`, index_page: 'https://first.example/' });
      expect(original.response.status).toBe(201);

      for (const encoding of ['form', 'json'] as const) {
        const { error, response } = await store(second(), encoding, {
          name: `${prefix}.${again}`,
          index_page: 'https://second.example/',
        });
        expect(response.status).toBe(409);
        expect(error).toMatchObject({ type: CONFLICT, status: 409, title: 'Conflict' });
        expect(error?.detail).toContain(`${prefix}.${stored}`);
        expect(error?.errors).toBeUndefined();
      }
      expect(await countRows(server, `${prefix}.${stored}`)).toBe(1);
      expect(await rowOf(server, original.data?.data.id ?? 0)).toMatchObject({
        name: `${prefix}.${stored}`,
        index_page: 'https://first.example/',
      });
    });
  });

  it.each([
    ['one spelling', (_i: number) => 'race.example.com', 'race.example.com'],
    [
      'many spellings',
      (i: number) => ['Race2.Example.com', 'race2.example.com.', 'RACE2.EXAMPLE.COM', 'race2.example.com'][i % 4] ?? '',
      'race2.example.com',
    ],
    [
      'Unicode and punycode',
      (i: number) => (i % 2 ? 'wörter.example' : 'xn--wrter-jua.example'),
      'xn--wrter-jua.example',
    ],
  ])('lets exactly one of 20 concurrent stores of %s succeed, across two accounts', async (_case, nameOf, stored) => {
    const attempts = Array.from({ length: 20 }, (_, i) => {
      const account = i % 2 ? bob : alice;
      const encoding: Encoding = i % 4 < 2 ? 'form' : 'json';
      return store(account, encoding, { name: nameOf(i) });
    });
    const results = await Promise.all(attempts);
    const statuses = results.map(({ response }) => response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    const winner = results.find(({ response }) => response.status === 201)?.data?.data;
    expect(winner?.name).toBe(stored);
    expect(await countRows(server, stored)).toBe(1);
    expect((await rowOf(server, winner?.id ?? 0))?.name).toBe(stored);
  });
});
