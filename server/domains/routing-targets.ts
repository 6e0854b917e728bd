// Where the platform serves custom domains (DOMAIN_TARGET_CNAME, DOMAIN_TARGET_A, DOMAIN_TARGET_AAAA), read and
// checked at start, and what follows from them for one domain: apex or subdomain, and the records to publish.
import ipaddr from 'ipaddr.js';
import { parse as parseDomain } from 'tldts';
import { challengeName, challengeValue } from './check-rules.js';
import { normalizeHostname } from './fields.js';

export interface RoutingTargets {
  /** The host name a subdomain's CNAME must reach; undefined when not set. */
  cname: string | undefined;
  /** The IPv4 and IPv6 addresses a name must resolve to, in canonical form (canonicalAddress). */
  a: string[];
  aaaa: string[];
}

export const NO_TARGETS: RoutingTargets = { cname: undefined, a: [], aaaa: [] };

export type DomainKind = 'apex' | 'subdomain';

export interface DnsRecord {
  type: 'TXT' | 'CNAME' | 'A' | 'AAAA';
  name: string;
  value: string;
  purpose: 'ownership' | 'routing';
}

/** An address as the resolver gives it (lowercase, IPv6 compressed), so that answers and settings compare. */
export function canonicalAddress(address: string): string {
  return ipaddr.parse(address).toString();
}

const addressesOf = (name: 'DOMAIN_TARGET_A' | 'DOMAIN_TARGET_AAAA', raw: string, problems: string[]): string[] => {
  const kind = name === 'DOMAIN_TARGET_A' ? 'ipv4' : 'ipv6';
  const family = kind === 'ipv4' ? 'IPv4' : 'IPv6';
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  const addresses: string[] = [];
  for (const entry of entries) {
    const valid = kind === 'ipv4' ? ipaddr.IPv4.isValidFourPartDecimal(entry) : ipaddr.IPv6.isValid(entry);
    if (!valid) {
      problems.push(`${name} must be a comma-separated list of ${family} addresses ("${entry}" is not one)`);
      continue;
    }
    const address = canonicalAddress(entry);
    if (!addresses.includes(address)) addresses.push(address);
  }
  return addresses;
};

/** The three settings, every malformed value reported in `problems`. Empty or unset: no such target. */
export function readRoutingTargets(
  env: { DOMAIN_TARGET_CNAME?: string; DOMAIN_TARGET_A?: string; DOMAIN_TARGET_AAAA?: string },
  problems: string[],
): RoutingTargets {
  const rawCname = (env.DOMAIN_TARGET_CNAME ?? '').trim();
  const cname = rawCname === '' ? undefined : normalizeHostname(rawCname);
  if (rawCname !== '' && cname === undefined) {
    problems.push(
      `DOMAIN_TARGET_CNAME must be a host name such as edge.platform.example, without scheme, port or path (got "${rawCname}")`,
    );
  }
  return {
    cname,
    a: addressesOf('DOMAIN_TARGET_A', env.DOMAIN_TARGET_A ?? '', problems),
    aaaa: addressesOf('DOMAIN_TARGET_AAAA', env.DOMAIN_TARGET_AAAA ?? '', problems),
  };
}

/** Whether any target is set. */
export const hasTargets = (targets: RoutingTargets) =>
  targets.cname !== undefined || targets.a.length > 0 || targets.aaaa.length > 0;

/**
 * Apex when the name is the registrable domain itself (the Public Suffix List, through tldts, decides where a
 * name's public suffix ends), subdomain otherwise. A name under no known suffix counts its last label as one.
 */
export function domainKind(name: string): DomainKind {
  const { domain } = parseDomain(name);
  return domain !== null && domain === name ? 'apex' : 'subdomain';
}

/**
 * How traffic of this domain must reach the platform: a CNAME (a subdomain, when DOMAIN_TARGET_CNAME is set),
 * addresses (an apex, which cannot have a CNAME, or a subdomain when only addresses are set), or nothing that this
 * domain can publish (none set, or an apex when only a CNAME target is).
 */
export type RoutingWay = 'cname' | 'addresses' | 'none';

export function routingWay(kind: DomainKind, targets: RoutingTargets): RoutingWay {
  if (kind === 'subdomain' && targets.cname !== undefined) return 'cname';
  return targets.a.length > 0 || targets.aaaa.length > 0 ? 'addresses' : 'none';
}

/** The records a domain's owner publishes: the ownership TXT record, then those that route its traffic. */
export function dnsRecords(name: string, token: string, kind: DomainKind, targets: RoutingTargets): DnsRecord[] {
  const records: DnsRecord[] = [
    { type: 'TXT', name: challengeName(name), value: challengeValue(token), purpose: 'ownership' },
  ];
  const way = routingWay(kind, targets);
  if (way === 'cname' && targets.cname !== undefined) {
    records.push({ type: 'CNAME', name, value: targets.cname, purpose: 'routing' });
  } else if (way === 'addresses') {
    for (const value of targets.a) records.push({ type: 'A', name, value, purpose: 'routing' });
    for (const value of targets.aaaa) records.push({ type: 'AAAA', name, value, purpose: 'routing' });
  }
  return records;
}
