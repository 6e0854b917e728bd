// The string formats the spec uses beyond JSON Schema's own: for each, how the runner recognises a valid value
// (its reading of the spec's description, independent of any server's code), how it makes valid ones, an
// invalid one, and a valid one longer than a given length. Add a format here and every field using it is covered.
import { domainToASCII, domainToUnicode } from 'node:url';
import fc from 'fast-check';

export interface FormatKit {
  validate(value: string): boolean;
  /** Valid values; `unique` is a run-unique token (letters and digits) to embed so records can be found again. */
  valid(unique: () => string): fc.Arbitrary<string>;
  invalid: string;
  /** A valid-looking value of exactly `length` characters. */
  ofLength(length: number): string;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const CONTROL = /\p{Cc}/u;

function isHostname(value: string): boolean {
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  if (name === '' || /[\s\p{Cc}]/u.test(name) || !name.isWellFormed()) return false;
  const ascii = /^[\x21-\x7e]*$/.test(name) ? name.toLowerCase() : domainToASCII(name);
  if (ascii === '' || ascii.length > 253) return false;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label)) || /^\d+$/.test(labels.at(-1) ?? '')) {
    return false;
  }
  return !labels.some((label) => label.startsWith('xn--')) || domainToASCII(domainToUnicode(ascii)) === ascii;
}

function isHttpUrl(value: string): boolean {
  if (value === '') return true; // the spec: an empty value clears the page
  if (/[\s\p{Cc}]/u.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

const asciiLabel = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,10}[a-z0-9])?$/);
// A few letters that IDNA maps to punycode, so internationalized names are exercised too.
const idnLabel = fc
  .array(fc.constantFrom('a', 'b', 'k', 'ü', 'ä', 'ö', 'é', 'ñ', 'ç', '1'), { minLength: 1, maxLength: 8 })
  .map((chars) => chars.join(''));
const tld = fc.stringMatching(/^[a-z]{2,6}$/);

function hostnames(unique: () => string): fc.Arbitrary<string> {
  return fc
    .record({
      labels: fc.array(fc.oneof({ weight: 4, arbitrary: asciiLabel }, { weight: 1, arbitrary: idnLabel }), {
        maxLength: 2,
      }),
      tld,
      upper: fc.boolean(),
      trailingDot: fc.boolean(),
    })
    .map(({ labels, tld: top, upper, trailingDot }) => {
      const name = [...labels, `c${unique()}`, top].join('.');
      return `${upper ? name.toUpperCase() : name}${trailingDot ? '.' : ''}`;
    });
}

const urlPath = fc.stringMatching(/^[A-Za-z0-9._~/-]{0,30}$/);

export const FORMATS: Record<string, FormatKit> = {
  'idn-hostname': {
    validate: isHostname,
    valid: hostnames,
    invalid: 'not a host name',
    ofLength: (length) => {
      // Labels of 63 letters, then ".example": too long as a whole, every other rule kept.
      const tail = '.example';
      let body = '';
      while (body.length + tail.length < length) body += body.length % 64 === 63 ? '.' : 'a';
      return `${body.replace(/\.$/, 'a')}${tail}`;
    },
  },
  'http-url': {
    validate: isHttpUrl,
    valid: () =>
      fc.oneof(
        { weight: 1, arbitrary: fc.constant('') },
        {
          weight: 6,
          arbitrary: fc
            .record({ https: fc.boolean(), host: hostnames(() => 'x'), path: urlPath })
            .map(({ https, host, path }) => `${https ? 'https' : 'http'}://${host.replace(/\.$/, '')}/${path}`),
        },
      ),
    invalid: 'ftp://files.example/nothing-here',
    ofLength: (length) => `https://example.com/${'a'.repeat(Math.max(0, length - 'https://example.com/'.length))}`,
  },
  // Where a webhook endpoint receives events: the spec asks for https (a server may also allow http).
  'webhook-url': {
    validate: (value) => isHttpUrl(value) && !/[#@]/.test(value),
    valid: () =>
      fc
        .record({ host: hostnames(() => 'x'), path: urlPath })
        .map(({ host, path }) => `https://${host.replace(/\.$/, '')}/${path}`),
    invalid: 'ftp://files.example/nothing-here',
    ofLength: (length) => `https://example.com/${'a'.repeat(Math.max(0, length - 'https://example.com/'.length))}`,
  },
  // An opaque cursor: only the server that made one knows it; the empty one (the start of a walk) is always valid.
  'list-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]*$/.test(value),
    valid: () => fc.constant(''),
    invalid: 'not a cursor!',
    ofLength: (length) => 'A'.repeat(length),
  },
  // The same, for the lists read by id alone (events, deliveries).
  'id-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]*$/.test(value),
    valid: () => fc.constant(''),
    invalid: 'not a cursor!',
    ofLength: (length) => 'A'.repeat(length),
  },
  // An API key's address range, as the service writes it back: a network address and its prefix.
  'ip-range': {
    validate: (value) => {
      const [address = '', prefix = '32', ...rest] = value.split('/');
      const parts = address.split('.').map(Number);
      if (rest.length > 0 || parts.length !== 4 || !/^\d{1,2}$/.test(prefix) || Number(prefix) > 32) {
        return /^[0-9a-f:]+(\/\d{1,3})?$/.test(value) && value.includes(':');
      }
      if (!parts.every((part) => Number.isInteger(part) && part >= 0 && part <= 255)) return false;
      const bits = parts.reduce((sum, part) => sum * 256 + part, 0);
      return bits % 2 ** (32 - Number(prefix)) === 0;
    },
    valid: () =>
      fc
        .record({ a: fc.integer({ min: 1, max: 223 }), b: fc.integer({ min: 0, max: 255 }), wide: fc.boolean() })
        .map(({ a, b, wide }) => (wide ? `${a}.${b}.0.0/16` : `${a}.${b}.7.9/32`)),
    invalid: '10.0.0.1/8',
    ofLength: (length) => `10.0.0.0/8${' '.repeat(Math.max(0, length - 10))}`,
  },
  // An RFC 3339 date-time with its zone (JSON Schema's `date-time`): within the last 20 days (inside any retention),
  // to the second.
  'date-time': {
    validate: (value) =>
      /^\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)$/.test(value) && !Number.isNaN(Date.parse(value)),
    // From today's start, as key-expiry: the same seed makes the same requests all day.
    valid: () =>
      fc
        .integer({ min: 1, max: 20 * 86_400 })
        .map((ago) => new Date((Math.floor(Date.now() / 86_400_000) * 86_400 - ago) * 1000).toISOString()),
    invalid: '2026-02-30T25:00:00Z',
    ofLength: (length) => `2026-01-01T00:00:00${'.0'.padEnd(Math.max(2, length - 20), '0')}Z`,
  },
  // When an API key stops working: a date-time with its zone, in the future and at most 10 years ahead.
  'key-expiry': {
    validate: (value) => {
      const ms = Date.parse(value);
      return /^\d{4}-\d\d-\d\dT/.test(value) && ms > Date.now() && ms < Date.now() + 3_650 * 86_400_000;
    },
    valid: () =>
      fc
        .integer({ min: 1, max: 3_000 })
        .map((days) => new Date(Math.floor(Date.now() / 86_400_000 + days) * 86_400_000).toISOString()),
    invalid: '2001-01-01T00:00:00Z',
    ofLength: (length) => `2030-01-01T00:00:00${'.0'.padEnd(Math.max(2, length - 20), '0')}Z`,
  },
  // How long a rotated key keeps working: a whole number and a unit, at most 10 years.
  'key-overlap': {
    validate: (value) => {
      const match = /^(\d{1,7})([smhdw])$/.exec(value);
      const unit = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 }[match?.[2] as 's'];
      return match !== null && Number(match[1]) * unit <= 3_660 * 86_400;
    },
    valid: () => fc.constantFrom('0s', '30m', '24h', '7d', '2w'),
    invalid: '90 days',
    ofLength: (length) => `${'0'.repeat(Math.max(1, length - 1))}s`,
  },
  // An API key's label: printable text, no control, invisible or line-separator characters.
  'key-label': {
    validate: (value) => value.isWellFormed() && !/[\p{Cc}\p{Cf}\p{Z}]/u.test(value.replaceAll(' ', '')),
    valid: (unique) => fc.stringMatching(/^[a-z][a-z0-9]{0,12}$/).map((word) => `${word} ${unique()}`),
    invalid: 'bell \u0007 inside',
    ofLength: (length) => 'k'.repeat(length),
  },
  'space-name': {
    validate: (value) => {
      const trimmed = value.trim();
      const length = [...trimmed].length;
      return value.isWellFormed() && length >= 1 && length <= 255 && !CONTROL.test(trimmed);
    },
    valid: (unique) =>
      fc
        .record({
          text: fc.oneof(
            fc.string({ unit: 'grapheme-ascii', maxLength: 30 }),
            fc.string({ unit: 'grapheme', maxLength: 12 }),
          ),
          pad: fc.constantFrom('', ' ', '  '),
        })
        .map(({ text, pad }) => `${pad}${text.replace(/\p{Cc}/gu, '')} ${unique()}${pad}`),
    invalid: 'bell \u0007 inside',
    ofLength: (length) => 'n'.repeat(length),
  },
};
