// Field formats as tables: host names (internationalized ones too), page URLs, space names.
import { describe, expect, it } from 'vitest';
import { hostnameHint, isHttpUrl, normalizeHostname } from '../../server/domains/fields.js';
import { isSpaceName } from '../../server/spaces/fields.js';

describe('normalizeHostname', () => {
  it.each([
    ['shop.example.com', 'shop.example.com'],
    ['Shop.Example.COM', 'shop.example.com'],
    ['shop.example.com.', 'shop.example.com'],
    ['bücher.example', 'xn--bcher-kva.example'],
    ['a-b.c-d.example', 'a-b.c-d.example'],
    [`${'a'.repeat(63)}.example`, `${'a'.repeat(63)}.example`],
  ])('stores %s as %s', (sent, stored) => {
    expect(normalizeHostname(sent)).toBe(stored);
  });

  it.each([
    ['', 'empty'],
    ['localhost', 'one label'],
    ['-shop.example.com', 'a label starting with a hyphen'],
    ['shop-.example.com', 'a label ending with a hyphen'],
    [`${'a'.repeat(64)}.example`, 'a label of 64'],
    [`${'a.'.repeat(127)}example`, 'over 253 in all'],
    ['192.168.0.1', 'an IPv4 address'],
    ['shop example.com', 'white space'],
    ['shop_1.example.com', 'an underscore'],
    ['xn--zz.example', 'a punycode label that does not decode'],
    ['shop..example.com', 'an empty label'],
  ])('refuses %s (%s)', (sent) => {
    expect(normalizeHostname(sent)).toBeUndefined();
  });
});

describe('hostnameHint', () => {
  it.each([
    ['https://shop.example.com/', /without the scheme and the path: send shop\.example\.com/],
    ['shop.example.com:8080', /without the port/],
    ['10.0.0.1', /IP address/],
    ['[2001:db8::1]', /IP address/],
  ])('explains %s', (sent, hint) => {
    expect(hostnameHint(sent)).toMatch(hint);
  });

  it.each(['shop..example', '', 'not a host at all!'])('has nothing specific to say about %s', (sent) => {
    expect(hostnameHint(sent)).toBeUndefined();
  });
});

describe('isHttpUrl', () => {
  it.each(['https://shop.example.com/welcome.html', 'http://127.0.0.1:8080/x?y=1'])('accepts %s', (url) => {
    expect(isHttpUrl(url)).toBe(true);
  });

  it.each([
    'ftp://shop.example.com/',
    'shop.example.com/index.html',
    'https://',
    'https://a b.example/',
    'javascript:alert(1)',
  ])('refuses %s', (url) => {
    expect(isHttpUrl(url)).toBe(false);
  });
});

describe('isSpaceName', () => {
  it.each([
    ['Marketing', true],
    ['  Marketing  ', true],
    ['a'.repeat(255), true],
    ['a'.repeat(256), false],
    ['   ', false],
    ['tab\there', false],
  ])('%j is a space name: %s', (name, expected) => {
    expect(isSpaceName(name)).toBe(expected);
  });
});
