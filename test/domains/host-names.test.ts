// The host name rule of domain `name` on store: which names are accepted, the form they are stored in, and
// which are refused with 422 naming `name`. Every case runs through both body encodings.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ENCODINGS } from '../support/encodings.js';
import { fieldsOf } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { countRows, rowOf, store } from './fixtures.js';

let server: TestServer;
let alice: TestAccount;

beforeAll(async () => {
  server = await startServer();
  alice = await server.account('alice');
});
// Each case stores its name once per encoding: start every test from an empty table.
afterEach(async () => {
  await server.db.deleteFrom('domains').execute();
});
afterAll(() => server.close());

const label = (length: number, char = 'a') => char.repeat(length);
/** 63 + 1 + 63 + 1 + 63 + 1 + 46 = 238 characters: the longest name whose `_dss-challenge.` name fits DNS's 253. */
const LONGEST = `${label(63)}.${label(63, 'b')}.${label(63, 'c')}.${label(46, 'd')}`;
/** 63 + 1 + 63 + 1 + 63 + 1 + 61 = 253 characters: a host name, but its challenge name cannot be one. */
const LONGEST_HOST = `${label(63)}.${label(63, 'b')}.${label(63, 'c')}.${label(61, 'd')}`;

const accepted: Array<[string, string, string]> = [
  ['a plain name', 'shop.example.com', 'shop.example.com'],
  ['upper case, lowered', 'Shop.EXAMPLE.Com', 'shop.example.com'],
  ['a trailing dot, removed', 'shop.example.com.', 'shop.example.com'],
  ['digits and inner hyphens', 'web-01.my-shop2.example', 'web-01.my-shop2.example'],
  ['a numeric first label', '123.example.com', '123.example.com'],
  ['a Unicode name, as punycode', 'bücher.example', 'xn--bcher-kva.example'],
  ['an upper-case Unicode name, as punycode', 'ÄRGER.de', 'xn--rger-koa.de'],
  ['a Unicode name in every label', '例え.テスト', 'xn--r8jz45g.xn--zckzah'],
  ['a punycode name, as sent', 'xn--bcher-kva.example', 'xn--bcher-kva.example'],
  ['an upper-case punycode name, lowered', 'XN--BCHER-KVA.Example', 'xn--bcher-kva.example'],
  ['a 63-character label', `${label(63)}.example.com`, `${label(63)}.example.com`],
  ['238 characters in all', LONGEST, LONGEST],
  ['238 characters and a trailing dot', `${LONGEST}.`, LONGEST],
  ['two one-letter labels', 'a.b', 'a.b'],
];

const rejected: Array<[string, string]> = [
  ['a single label', 'localhost'],
  ['an empty name', ''],
  ['only a dot', '.'],
  ['a 64-character label', `${label(64)}.example.com`],
  ['239 characters in all (its challenge name would pass 253)', `${LONGEST}e`],
  ['253 characters in all', LONGEST_HOST],
  ['254 characters in all', `${LONGEST_HOST}e`],
  ['a label starting with a hyphen', '-shop.example.com'],
  ['a label ending with a hyphen', 'shop-.example.com'],
  ['an underscore', 'shop_1.example.com'],
  ['a space', 'shop example.com'],
  ['surrounding white space', ' shop.example.com '],
  ['an empty label', 'a..b.com'],
  ['a leading dot', '.example.com'],
  ['two trailing dots', 'example.com..'],
  ['an IPv4 address', '192.168.0.1'],
  ['a URL', 'https://shop.example.com/'],
  ['a port', 'shop.example.com:8080'],
  ['a path', 'shop.example.com/x'],
  ['a Unicode label whose punycode passes 63 characters', `${'ü'.repeat(60)}.example`],
  ['a punycode label that does not decode', 'xn--zz.example'],
];

describe.each(ENCODINGS)('domain name rule (%s body)', (encoding) => {
  it.each(accepted)('accepts %s', async (_case, name, stored) => {
    const { data, response } = await store(alice, encoding, { name });
    expect(response.status).toBe(201);
    expect(data?.data.name).toBe(stored);
    expect((await rowOf(server, data?.data.id ?? 0))?.name).toBe(stored);
  });

  it.each(rejected)('refuses %s with 422 naming name', async (_case, name) => {
    const { error, response } = await store(alice, encoding, { name });
    expect(response.status).toBe(422);
    expect(error?.type).toBe('/problems/validation');
    expect(fieldsOf(error)).toEqual(['body:name']);
    expect(await countRows(server)).toBe(0);
  });
});

describe('domain name rule (JSON types)', () => {
  it.each([
    ['a number', 42],
    ['null', null],
    ['an array', ['shop.example.com']],
    ['an object', { name: 'shop.example.com' }],
    ['true', true],
  ])('refuses %s as name with 422 naming name', async (_case, name) => {
    const { error, response } = await store(alice, 'json', { name });
    expect(response.status).toBe(422);
    expect(fieldsOf(error)).toEqual(['body:name']);
    expect(await countRows(server)).toBe(0);
  });
});
