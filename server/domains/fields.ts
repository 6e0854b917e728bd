// Field rules of domains: host names (including internationalized ones) and custom page URLs.
import { domainToASCII, domainToUnicode } from 'node:url';
import { foldText } from '../db/listing.js';
import { type FieldFormat, wellFormed } from '../formats.js';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * The stored form of a host name: ASCII (punycode), lowercase, no trailing dot; undefined when the value is
 * not a host name of at least two labels of letters, digits and hyphens, 1–63 each, at most 253 in all.
 */
export function normalizeHostname(value: string): string | undefined {
  const withoutDot = value.endsWith('.') ? value.slice(0, -1) : value;
  if (withoutDot === '' || /[\s\p{Cc}]/u.test(withoutDot)) return undefined;
  // domainToASCII applies IDNA (UTS #46): it maps case and compatibility forms and encodes Unicode labels.
  const ascii = /^[\x21-\x7e]*$/.test(withoutDot) ? withoutDot.toLowerCase() : domainToASCII(withoutDot);
  if (ascii === '' || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  // An all-digit last label makes it an IPv4 address, not a host name.
  if (/^\d+$/.test(labels.at(-1) ?? '')) return undefined;
  // A punycode label must decode: reject names like "xn--zz.example" that no registry could hold. Node 20
  // decodes such a name to "", Node 24 leaves the label as it was; either way it does not round-trip.
  if (labels.some((label) => label.startsWith('xn--'))) {
    const unicode = domainToUnicode(ascii);
    if (unicode.split('.').some((label) => label.startsWith('xn--')) || domainToASCII(unicode) !== ascii) {
      return undefined;
    }
  }
  return ascii;
}

/** What search and sort compare: the stored name, and its Unicode form for internationalized names. */
export function domainNameKey(asciiName: string): string {
  const unicode = domainToUnicode(asciiName);
  return unicode && unicode !== asciiName ? `${asciiName}\n${foldText(unicode)}` : asciiName;
}

export function isHttpUrl(value: string): boolean {
  if (/[\s\p{Cc}]/u.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** Stored form of a page URL: an empty string (or null) clears it. */
export function normalizePageUrl(value: string | null | undefined): string | null | undefined {
  return value === '' ? null : value;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}\.?$/;
// Hex digits, colons and dots (IPv4-mapped), at least one colon: the colon is checked apart, so that no two
// quantifiers of the pattern can trade characters (which made it quadratic on a run of colons).
const IPV6_CHARACTERS = /^\[?[0-9a-f:.]+\]?$/i;
const isIpv6Like = (value: string) => value.includes(':') && IPV6_CHARACTERS.test(value);

/** What is wrong with a value that is almost a host name, and how to fix it; undefined when nothing specific. */
export function hostnameHint(value: string): string | undefined {
  const shown = value.length > 100 ? `${value.slice(0, 100)}…` : value;
  if (IPV4.test(value) || isIpv6Like(value)) {
    return `must be a host name such as shop.example.com; ${shown} is an IP address, and IP addresses are not domain names`;
  }
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(value);
  const rest = scheme ? value.slice(scheme[0].length) : value;
  const host = /^[^/?#:]*/.exec(rest)?.[0] ?? '';
  if (host === '' || normalizeHostname(host) === undefined) return undefined;
  const extras = [scheme && 'the scheme', /^[^/?#]*:/.test(rest) && 'the port', /[/?#]/.test(rest) && 'the path'];
  const parts = extras.filter((extra): extra is string => typeof extra === 'string');
  if (parts.length === 0) return undefined;
  const list = parts.length > 1 ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}` : parts[0];
  return `must be a host name alone, without ${list}: send ${host}, not ${shown}`;
}

export const domainFormats: Record<string, FieldFormat> = {
  'idn-hostname': {
    validate: wellFormed((value) => normalizeHostname(value) !== undefined),
    message:
      'must be a host name such as shop.example.com: two or more labels of letters, digits and hyphens (1–63 each, no leading or trailing hyphen), at most 253 characters',
    hint: hostnameHint,
  },
  'http-url': {
    validate: wellFormed((value) => value === '' || isHttpUrl(value)),
    message: 'must be an absolute http:// or https:// URL (or empty to clear it)',
  },
};
