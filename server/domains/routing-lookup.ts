// The routing lookup of a name: its CNAME chain, A and AAAA records, through the same servers, time limit and
// tries as the ownership record's (DNS_SERVERS, DNS_TIMEOUT_S, DNS_TRIES). Nothing is cached here either.
import type { LookupResult } from './check-rules.js';
import { MAX_CNAME_HOPS, type RoutingLookupResult } from './routing-rules.js';
import { bounded, configuredResolver, type TxtLookupSettings } from './txt-lookup.js';

export type RoutingLookup = ((name: string) => Promise<RoutingLookupResult>) & { close(): void };

/** DNS queries one routing lookup sends at most, the chain's hops beyond the first aside (CNAME, A, AAAA). */
export const ROUTING_QUERIES = 3;

export function routingLookup(settings: TxtLookupSettings): RoutingLookup {
  const resolver = configuredResolver(settings);
  const ask = (query: Promise<string[]>) => bounded(query, settings.timeoutMs);
  const lower = (names: string[]) => names.map((name) => name.toLowerCase().replace(/\.$/, ''));
  /** The chain of CNAME targets from `name`, a hop at a time (a resolver answers one hop per CNAME query). */
  const chain = async (name: string): Promise<LookupResult> => {
    const first = await ask(resolver.resolveCname(name).then(lower));
    if (!('values' in first) || first.values.length === 0) return first;
    const hops = [first.values[0] as string];
    while (hops.length < MAX_CNAME_HOPS) {
      const next = await ask(resolver.resolveCname(hops.at(-1) as string).then(lower));
      const target = 'values' in next ? next.values[0] : undefined;
      if (target === undefined || hops.includes(target)) break;
      hops.push(target);
    }
    return { values: hops };
  };
  const lookup = async (name: string): Promise<RoutingLookupResult> => {
    const [cname, a, aaaa] = await Promise.all([
      chain(name),
      ask(resolver.resolve4(name)),
      ask(resolver.resolve6(name)),
    ]);
    return { cname, a, aaaa };
  };
  return Object.assign(lookup, { close: () => resolver.cancel() });
}
