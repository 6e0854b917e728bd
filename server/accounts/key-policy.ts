// What a key may do, beside whose it is: its scopes, its expiry and the client addresses it may be used from.
// Pure rules, read once when a key's row is read (and then cached with it), so a request pays no database read.
import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The scopes operations declare (`security: [{ bearerAuth: [<scope>] }]` in the spec). A write scope includes its
 * read scope (as Stripe's restricted keys and GitHub's fine-grained tokens): what a write answers is never more
 * than the key may read.
 */
export const SCOPES = [
  'domains:read',
  'domains:write',
  'spaces:read',
  'spaces:write',
  'webhooks:read',
  'webhooks:write',
  'events:read',
  'api_keys:read',
  'api_keys:write',
] as const;

export type Scope = (typeof SCOPES)[number];

/**
 * The scope of managing keys, which "every scope" (a key made without --scopes) does not hold: a key that can
 * make, rotate or revoke keys is given that power by name, never by a release that adds the scope (CHANGELOG
 * 1.4.0). Reading keys (api_keys:read: their records, never a secret) is a read scope like the others.
 */
export const KEY_SCOPES: readonly string[] = ['api_keys:write'];

export interface KeyPolicy {
  /**
   * The scopes the key holds; undefined: every scope but KEY_SCOPES (api_keys:write), those added later included
   * (a key made without --scopes).
   */
  scopes?: ReadonlySet<string>;
  /** When the key stops working (ms since the epoch); undefined: never. */
  expiresAt?: number;
  /** Why it expires then, when it is the end of a rotation's overlap: the successor's key id. */
  replacedBy?: string;
  /** The client address ranges it may be used from; undefined: any address. */
  allowedIps?: { list: BlockList; text: string };
}

/** Every read scope: what `read` stands for in a list of scopes (a read-only key). */
export const READ_SCOPES = SCOPES.filter((scope) => scope.endsWith(':read'));

/**
 * Reads a comma- or space-separated list of scopes (`read` stands for every read scope); the sentence of the
 * problem when one is unknown.
 */
export function parseScopes(text: string): Scope[] | { error: string } {
  const names = text
    .split(/[\s,]+/)
    .map((name) => name.trim())
    .filter(Boolean)
    .flatMap((name) => (name === 'read' ? READ_SCOPES : [name]));
  if (names.length === 0) return { error: `Name at least one scope: ${SCOPES.join(', ')}.` };
  // An empty entry (`spaces:read,,`, a trailing comma) is a slip: a scope meant and left out, never nothing.
  if (text.split(',').some((part) => part.trim() === '')) {
    return { error: `The scopes have an empty entry between commas ("${text.trim().slice(0, 60)}"); name each scope.` };
  }
  const unknown = names.filter((name) => !(SCOPES as readonly string[]).includes(name));
  if (unknown.length > 0) {
    return {
      error: `Unknown scope ${unknown.map((n) => JSON.stringify(n)).join(', ')}; the scopes are ${SCOPES.join(', ')}.`,
    };
  }
  return [...new Set(names)].sort() as Scope[];
}

/** Whether a set of held scopes covers a scope: itself, or for `<resource>:read`, `<resource>:write`. */
export function holdsScope(held: ReadonlySet<string>, scope: string): boolean {
  return held.has(scope) || (scope.endsWith(':read') && held.has(`${scope.slice(0, -':read'.length)}:write`));
}

/** The declared scopes the key lacks (all are needed: scopes of one OpenAPI requirement are joined by AND). */
export function missingScopes(policy: KeyPolicy | undefined, declared: readonly string[]): string[] {
  const held = policy?.scopes;
  return held
    ? declared.filter((scope) => !holdsScope(held, scope))
    : declared.filter((scope) => KEY_SCOPES.includes(scope));
}

const UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
/** At most ten years: a typo (`90000d`) is an error, not a key that never expires. */
const MAX_DURATION_MS = 3_660 * 86_400_000;

/** `90d`, `24h`, `30m`, `45s`, `2w`: a duration in ms; the problem's sentence otherwise. */
export function parseDuration(text: string, what: string): number | { error: string } {
  const match = /^(\d{1,7})([smhdw])$/.exec(text.trim());
  const ms = match ? Number(match[1]) * (UNITS[match[2] as string] as number) : Number.NaN;
  if (!match || ms > MAX_DURATION_MS) {
    return {
      error: `${what} must be a whole number and a unit (s, m, h, d, w) of at most 10 years, as 90d or 24h (got "${text}").`,
    };
  }
  return ms;
}

/**
 * An absolute time with a time zone (RFC 3339, as `2027-01-31T00:00:00Z`), a real one (no 2027-02-30, no hour
 * 24, no offset past ±23:59), from 1970 on and at most 10 years from now; the problem's sentence otherwise.
 */
export function parseInstant(text: string, what: string, now = Date.now()): number | { error: string } {
  const shape = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|([+-])(\d{2}):(\d{2}))$/i;
  const parts = shape.exec(text.trim());
  if (!parts) {
    return { error: `${what} must be a date and time with its zone, as 2027-01-31T00:00:00Z (got "${text}").` };
  }
  const [year, month, day, hour, minute, second = 0] = parts.slice(1, 7).map((part) => Number(part ?? 0)) as number[];
  const [offsetHours, offsetMinutes] = [Number(parts[8] ?? 0), Number(parts[9] ?? 0)];
  // setUTCFullYear, not Date.UTC: the latter reads the years 0 to 99 as 1900 to 1999.
  const date = new Date(0);
  date.setUTCFullYear(year as number, (month as number) - 1, day);
  const real =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === (month as number) - 1 &&
    date.getUTCDate() === day &&
    (hour as number) <= 23 &&
    (minute as number) <= 59 &&
    second <= 59 &&
    offsetHours <= 23 &&
    offsetMinutes <= 59;
  if (!real) return { error: `${what} names a date or time that does not exist (got "${text}").` };
  const ms = Date.parse(text.trim());
  if (Number.isNaN(ms) || ms < 0 || ms > now + MAX_DURATION_MS) {
    return { error: `${what} must be from 1970 on and at most 10 years from now (got "${text}").` };
  }
  return ms;
}

/**
 * An address or range in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address), normalised: IPv6
 * compressed in lowercase, an IPv4-mapped range (`::ffff:10.0.0.0/104`) as the IPv4 range it is. Refused, with
 * the problem's sentence: a range whose meaning changes when written another way: an IPv4-mapped address with a
 * prefix shorter than 96 (`::ffff:10.0.0.0/8` is `::/8`, every IPv4 client and `::1`), bits set past the prefix
 * (`10.0.0.1/8`), IPv4 inside IPv6 other than mapped, and zone ids.
 */
export function parseRange(text: string): string | { error: string } {
  const [address = '', prefix, ...rest] = text.trim().split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
  if (family === 0 || rest.length > 0 || !(length >= 0 && length <= bits) || address.includes('%')) {
    return { error: `"${text}" is not an IPv4 or IPv6 address or range, as 10.0.0.0/8 or 2001:db8::/32.` };
  }
  if (family === 6 && address.includes('.') && !/^::ffff:[\d.]+$/i.test(address)) {
    return { error: `"${text}" writes an IPv4 address inside IPv6 other than ::ffff:a.b.c.d; write the IPv4 range.` };
  }
  if (!ipaddr.isValid(address)) {
    return { error: `"${text}" is not an IPv4 or IPv6 address or range, as 10.0.0.0/8 or 2001:db8::/32.` };
  }
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      if (length < 96) {
        return {
          error:
            `"${text}" is an IPv4-mapped address with a prefix shorter than 96: it means ${networkOf(v6, length)}/${length}, ` +
            'not an IPv4 range. Write the IPv4 range itself, as 10.0.0.0/8 (an IPv4-mapped range takes /96 to /128).',
        };
      }
      return parseRange(`${v6.toIPv4Address().toString()}/${length - 96}`);
    }
  }
  const network = networkOf(parsed, length);
  if (network !== networkOf(parsed, bits)) {
    return {
      error: `"${text}" has bits set past its /${length} prefix: write ${network}/${length} for the range, or the address alone.`,
    };
  }
  return `${network}/${length}`;
}

/** The first address of the range (the address with every bit past the prefix cleared), written normalised. */
function networkOf(address: ipaddr.IPv4 | ipaddr.IPv6, length: number): string {
  const bytes = address.toByteArray();
  const cleared = bytes.map((byte, i) => {
    const keep = Math.min(8, Math.max(0, length - i * 8));
    return byte & ((0xff << (8 - keep)) & 0xff);
  });
  const network = ipaddr.fromByteArray(cleared);
  return network.kind() === 'ipv4' ? network.toString() : rfc5952(network as ipaddr.IPv6);
}

/**
 * An IPv6 address as RFC 5952 writes it (lowercase, the first longest run of two or more zero groups as `::`), by
 * the WHATWG URL serializer, which writes IPv6 hosts so. Not ipaddr.js 1.9.1's toRFC5952String: where two runs of
 * zeros tie it compresses the last one, against RFC 5952 4.2.3 (`1:0:0:2:0:0:3:4` must be `1::2:0:0:3:4`).
 */
function rfc5952(address: ipaddr.IPv6): string {
  return new URL(`http://[${address.toNormalizedString()}]/`).hostname.slice(1, -1);
}

/** The ranges (as parseRange wrote them, comma-separated) as a BlockList that matches addresses of both families. */
export function rangeList(text: string): { list: BlockList; text: string } {
  const list = new BlockList();
  for (const range of text.split(',').filter(Boolean)) {
    const [address = '', prefix = ''] = range.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    list.addSubnet(address, Number(prefix), family);
  }
  return { list, text };
}

/** Whether a client address (as Express gives it: IPv4, IPv6, or IPv4 mapped into IPv6) is in the key's ranges. */
export function addressAllowed(policy: KeyPolicy | undefined, address: string | undefined): boolean {
  const ranges = policy?.allowedIps;
  if (!ranges) return true;
  if (!address) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  if (mapped) return ranges.list.check(mapped, 'ipv4') || ranges.list.check(address, 'ipv6');
  const family = isIP(address);
  return family !== 0 && ranges.list.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Whether the key has expired at `now`. */
export function expired(policy: KeyPolicy | undefined, now = Date.now()): boolean {
  return policy?.expiresAt !== undefined && now >= policy.expiresAt;
}

/** The policy from the columns of a key's row (migration 0006: scopes, expires_at, allowed_ips, replaced_by). */
export function policyOf(row: {
  scopes: string | null;
  expires_at: string | Date | null;
  allowed_ips: string | null;
  replaced_by: string | null;
}): KeyPolicy {
  return {
    ...(row.scopes !== null ? { scopes: new Set(row.scopes.split(' ').filter(Boolean)) } : {}),
    ...(row.expires_at !== null ? { expiresAt: new Date(row.expires_at).getTime() } : {}),
    ...(row.replaced_by !== null ? { replacedBy: row.replaced_by } : {}),
    ...(row.allowed_ips ? { allowedIps: rangeList(row.allowed_ips) } : {}),
  };
}
