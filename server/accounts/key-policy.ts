// What a key may do, beside whose it is: its scopes, its expiry and the client addresses it may be used from.
// Pure rules, read once when a key's row is read (and then cached with it), so a request pays no database read.
import { BlockList, isIP } from 'node:net';

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
] as const;

export type Scope = (typeof SCOPES)[number];

export interface KeyPolicy {
  /** The scopes the key holds; undefined: every scope, those added later included (a key made without --scopes). */
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
  return held ? declared.filter((scope) => !holdsScope(held, scope)) : [];
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

/** An absolute time with a time zone (RFC 3339, as `2027-01-31T00:00:00Z`); the problem's sentence otherwise. */
export function parseInstant(text: string, what: string): number | { error: string } {
  const shape = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;
  const ms = shape.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  if (Number.isNaN(ms)) {
    return { error: `${what} must be a date and time with its zone, as 2027-01-31T00:00:00Z (got "${text}").` };
  }
  return ms;
}

/**
 * An address or range in CIDR notation (`10.0.0.0/8`, `2001:db8::/32`, or one address), normalised; the
 * problem's sentence otherwise.
 */
export function parseRange(text: string): string | { error: string } {
  const [address = '', prefix, ...rest] = text.trim().split('/');
  const family = isIP(address);
  const bits = family === 4 ? 32 : 128;
  const length = prefix === undefined ? bits : /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN;
  if (family === 0 || rest.length > 0 || !(length >= 0 && length <= bits)) {
    return { error: `"${text}" is not an IPv4 or IPv6 address or range, as 10.0.0.0/8 or 2001:db8::/32.` };
  }
  return `${address.toLowerCase()}/${length}`;
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
