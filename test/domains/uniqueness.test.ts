// One domain per name and account; across accounts, pending claims of a name block nobody, while a name held
// active elsewhere answers 409 domain-held-elsewhere. Of many concurrent stores of one name by one account,
// exactly one succeeds.
import { describe, expect, it } from 'vitest';
import type { Encoding } from '../support/encodings.js';
import { serverForFile } from '../support/file-server.js';
import { countRows, rowOf, store } from './fixtures.js';

const { server, account: alice } = await serverForFile();
const bob = await server.account('bob');

const CONFLICT = '/problems/conflict';
const HELD = '/problems/domain-held-elsewhere';

const spellings: Array<[string, string, string, string]> = [
  ['the same name', 'same.example.com', 'same.example.com', 'same.example.com'],
  ['another case', 'case.example.com', 'CASE.Example.com', 'case.example.com'],
  ['a trailing dot', 'dot.example.com', 'dot.example.com.', 'dot.example.com'],
  ['punycode after Unicode', 'bücher.example', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
  ['Unicode after punycode', 'xn--rger-koa.de', 'ärger.de', 'xn--rger-koa.de'],
  ['upper-case Unicode after lower-case', 'straße.example', 'STRAßE.example', 'xn--strae-oqa.example'],
];

/** Marks a domain active below the API: the DNS proof itself is tested against a real DNS server (test/dns). */
async function holdActive(id: number) {
  await server.db.updateTable('domains').set({ status: 'active' }).where('id', '=', id).execute();
}

describe('domains_store uniqueness', () => {
  // Each case stores its names under its own first label, so that every case makes its first store.
  it.each(spellings)(
    'answers 409 in the same account for %s and keeps the first domain',
    async (_case, first, again, stored) => {
      const original = await store(alice, 'form', { name: `own.${first}`, index_page: 'https://first.example/' });
      expect(original.response.status).toBe(201);
      for (const encoding of ['form', 'json'] as const) {
        const { error, response } = await store(alice, encoding, {
          name: `own.${again}`,
          index_page: 'https://second.example/',
        });
        expect(response.status).toBe(409);
        expect(error).toMatchObject({ type: CONFLICT, status: 409, title: 'Conflict' });
        expect(error?.detail).toContain(`own.${stored}`);
      }
      expect(await countRows(server, `own.${stored}`)).toBe(1);
      expect(await rowOf(server, original.data?.data.id ?? 0)).toMatchObject({ index_page: 'https://first.example/' });
    },
  );

  it.each(spellings)('lets another account claim a pending name, spelt as %s', async (_case, first, again, stored) => {
    const original = await store(alice, 'form', { name: `pending.${first}` });
    const second = await store(bob, 'json', { name: `pending.${again}` });
    expect([original.response.status, second.response.status]).toEqual([201, 201]);
    expect(second.data?.data).toMatchObject({ name: `pending.${stored}`, status: 'pending' });
    expect(second.data?.data.verification.value).not.toBe(original.data?.data.verification.value);
    expect(await countRows(server, `pending.${stored}`)).toBe(2);
  });

  it.each(spellings)(
    'answers 409 domain-held-elsewhere for a name active elsewhere, spelt as %s',
    async (_case, first, again, stored) => {
      const original = await store(alice, 'form', { name: `held.${first}` });
      await holdActive(original.data?.data.id ?? 0);
      const { error, response } = await store(bob, 'form', { name: `held.${again}` });
      expect(response.status).toBe(409);
      expect(error).toMatchObject({ type: HELD, status: 409, title: 'Conflict' });
      expect(error?.detail).toContain(`_dss-challenge.held.${stored}`);
      expect(await countRows(server, `held.${stored}`)).toBe(1);
    },
  );

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
  ])('lets exactly one of 10 concurrent stores of %s per account succeed', async (_case, nameOf, stored) => {
    const attempts = Array.from({ length: 20 }, (_, i) => {
      const account = i % 2 ? bob : alice;
      const encoding: Encoding = i % 4 < 2 ? 'form' : 'json';
      return store(account, encoding, { name: nameOf(i) });
    });
    const results = await Promise.all(attempts);
    const statuses = results.map(({ response }) => response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(2);
    expect(statuses.filter((s) => s === 409)).toHaveLength(18);
    const winners = results.filter(({ response }) => response.status === 201).map(({ data }) => data?.data);
    expect(winners.map((domain) => domain?.name)).toEqual([stored, stored]);
    expect(await countRows(server, stored)).toBe(2);
  });
});
