// Which webhook targets the service may call: by default https only, and only a global unicast address: never
// one inside the operator's network (loopback, private, link-local, shared, cloud metadata, …), also where it is
// written inside IPv6 (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64, 6to4, Teredo). One rule, parsed by
// ipaddr.js, judged on every address the host resolves to when the endpoint is saved (target-check.ts), and again
// on the address each delivery connects to (sender.ts, against DNS rebinding). A refusal states the rule, never
// what a name resolved to. WEBHOOK_ALLOW_PRIVATE_TARGETS allows http and such addresses, for development and tests.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** The rule, as a refusal states it. */
export const ADDRESS_RULE =
  'only public (global unicast) addresses may be called: not loopback, private, link-local, shared, reserved, ' +
  'documentation or multicast ones, nor such an IPv4 address written inside IPv6';

const cidr = (text: string) => ipaddr.parseCIDR(text);

/** IPv4 ranges that ipaddr.js 1.x calls unicast but that are no public host (RFC 6890's special-purpose table). */
const SPECIAL_V4 = [
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
].map(cidr);

/** Global unicast IPv6: everything else (site-local fec0::/10, unique local, link-local, …) is refused. */
const GLOBAL_V6 = cidr('2000::/3');

/** IPv6 ranges inside 2000::/3 that are no public host; Teredo's 2001::/32 is unwrapped before this is asked. */
const SPECIAL_V6 = ['2001::/23', '2001:db8::/32', '3fff::/20'].map(cidr);

/** IPv6 forms whose last 32 bits are an IPv4 address the connection reaches: IPv4-mapped, NAT64 (RFC 6052). */
const CARRIES_LAST_32_BITS = ['::ffff:0:0/96', '64:ff9b::/96'].map(cidr);

const matches = (address: Address, ranges: Array<[Address, number]>) =>
  ranges.some(
    (range) => address.kind() === range[0].kind() && (address as ipaddr.IPv4).match(range as [ipaddr.IPv4, number]),
  );

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** The IPv4 addresses an IPv6 address carries (none for a plain IPv6 address). */
function carriedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  if (matches(address, CARRIES_LAST_32_BITS)) return [ipv4Of(p[6], p[7])];
  // 6to4: 2002:AABB:CCDD::/48 is the site of AA.BB.CC.DD.
  if (address.range() === '6to4') return [ipv4Of(p[1], p[2])];
  // Teredo: the server's address in plain, the client's with every bit flipped.
  if (address.range() === 'teredo') return [ipv4Of(p[2], p[3]), ipv4Of(p[6] ^ 0xffff, p[7] ^ 0xffff)];
  return [];
}

function globalUnicast(address: Address): boolean {
  if (address.kind() === 'ipv4') return address.range() === 'unicast' && !matches(address, SPECIAL_V4);
  const v6 = address as ipaddr.IPv6;
  // Each form that carries an IPv4 address is judged by the addresses it carries, all of them.
  const carried = carriedIpv4(v6);
  if (carried.length > 0) return carried.every(globalUnicast);
  // The rest, IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) and local-use NAT64
  // (64:ff9b:1::/48) among them, lies outside 2000::/3: refused whatever it carries.
  return v6.match(GLOBAL_V6 as [ipaddr.IPv6, number]) && v6.range() === 'unicast' && !matches(v6, SPECIAL_V6);
}

/** Whether an address (IPv4 or IPv6, as DNS answers or a URL's host gives it) is one a webhook may call. */
export function isSafeAddress(text: string): boolean {
  const bare = text.replace(/^\[|\]$/g, '');
  // Only the four-part dotted and the IPv6 forms: ipaddr.js also reads "127.1" and "0x7f.1", which the URL
  // parser has already written as 127.0.0.1, and which a DNS answer never holds.
  if (!ipaddr.IPv6.isValid(bare) && !ipaddr.IPv4.isValidFourPartDecimal(bare)) return false;
  return globalUnicast(ipaddr.parse(bare));
}

/** Whether a host (a URL's hostname) is an IP address rather than a name to resolve. */
export function isAddress(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  return ipaddr.IPv6.isValid(bare) || ipaddr.IPv4.isValidFourPartDecimal(bare);
}

/** What is wrong with a webhook URL before any lookup (scheme, form, port, an address host), or undefined. */
export function urlProblem(value: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) {
    return allowPrivate ? 'must be an http:// or https:// URL' : 'must be an https:// URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.hash) return 'must not have a #fragment';
  if (url.port === '0') return 'must not name port 0';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return 'must name a host';
  if (allowPrivate) return undefined;
  if (host === 'localhost' || host.endsWith('.localhost')) return 'must not be a loopback host';
  if (isAddress(host) && !isSafeAddress(host)) return `must not point at ${host}: ${ADDRESS_RULE}`;
  return undefined;
}
