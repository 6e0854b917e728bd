// Which webhook targets the service may call: by default https only, and never an address inside the
// operator's network (loopback, private, link-local, shared, cloud metadata, …), judged on every address the
// host resolves to when the endpoint is saved, and again on the address each delivery connects to (against
// DNS rebinding). WEBHOOK_ALLOW_PRIVATE_TARGETS allows http and such addresses, for development and tests.
import { BlockList, isIP } from 'node:net';

/** Address ranges a webhook may not reach: everything that is not a public unicast address. */
const UNSAFE_V4: Array<[string, number, string]> = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared (carrier-grade NAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];
const UNSAFE_V6: Array<[string, number, string]> = [
  ['fd00:ec2::254', 128, 'cloud metadata'],
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['64:ff9b::', 96, 'NAT64'],
  ['100::', 64, 'discard'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'private (unique local)'],
  ['fe80::', 10, 'link-local'],
  ['ff00::', 8, 'multicast'],
];

const RANGES = [
  ...UNSAFE_V4.map(([network, prefix, why]) => ({ network, prefix, why, type: 'ipv4' as const })),
  ...UNSAFE_V6.map(([network, prefix, why]) => ({ network, prefix, why, type: 'ipv6' as const })),
].map((range) => {
  const list = new BlockList();
  list.addSubnet(range.network, range.prefix, range.type);
  return { ...range, list };
});

/** Why an IP address is not a safe target (e.g. "loopback"), or undefined for a public unicast address. */
export function unsafeAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  // An IPv4 address written as IPv6 (::ffff:127.0.0.1) is judged as the IPv4 address it is.
  const mapped = family === 6 ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
  const [value, type] = mapped
    ? [mapped, 'ipv4' as const]
    : [address, family === 4 ? ('ipv4' as const) : ('ipv6' as const)];
  return RANGES.find((range) => range.type === type && range.list.check(value, type))?.why;
}

/** What is wrong with a webhook URL before any lookup (scheme, form), or undefined. */
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
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return 'must name a host';
  if (!allowPrivate && (host === 'localhost' || host.endsWith('.localhost'))) return 'must not be a loopback host';
  if (!allowPrivate && isIP(host)) {
    const why = unsafeAddressReason(host);
    if (why) return `must not point at a ${why} address (${host})`;
  }
  return undefined;
}
