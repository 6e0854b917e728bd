// The rules of routing as pure functions: what a domain's CNAME, A and AAAA answers show about where its traffic
// goes, compared with the operator's targets. No I/O here: routing-lookup.ts asks DNS, states.ts stores the result.
import type { LookupResult } from './check-rules.js';
import { canonicalAddress, type DomainKind, type RoutingTargets, routingWay } from './routing-targets.js';

export const ROUTING_CODES = [
  'pointed',
  'not_pointed',
  'partly_pointed',
  'missing',
  'lookup_failed',
  'not_checked',
  'no_target',
] as const;
export type RoutingCode = (typeof ROUTING_CODES)[number];

export interface RoutingObserved {
  /** The CNAME chain from the name, one host name per hop. */
  cname: string[];
  a: string[];
  aaaa: string[];
}

/** What a routing check saw (stored with the domain); `checked_at` is the row's routing_checked_at. */
export interface RoutingObservation {
  code: RoutingCode;
  message: string;
  observed: RoutingObserved;
}

/** The answers of one routing lookup: the CNAME chain's host names (or the first hop's error), A and AAAA. */
export interface RoutingLookupResult {
  cname: LookupResult;
  a: LookupResult;
  aaaa: LookupResult;
}

/** At most this many host names of a CNAME chain are followed, and this many addresses of each family kept. */
export const MAX_CNAME_HOPS = 4;
export const MAX_OBSERVED_ADDRESSES = 20;

export const EMPTY_OBSERVED: RoutingObserved = { cname: [], a: [], aaaa: [] };

/** Lookup errors that mean "no such record" rather than a failure. */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'EBADNAME']);

const valuesOf = (result: LookupResult) => ('values' in result ? result.values : []);
const failed = (result: LookupResult) => 'error' in result && !ABSENT.has(result.error);

/** The records to publish, as a person reads them in a message. */
function instructions(name: string, kind: DomainKind, targets: RoutingTargets): string {
  if (routingWay(kind, targets) === 'cname') return `a CNAME record at ${name} to ${targets.cname}`;
  const records = [...targets.a.map((a) => `A ${a}`), ...targets.aaaa.map((aaaa) => `AAAA ${aaaa}`)];
  return `${records.join(', ')} at ${name}${kind === 'apex' ? ' (an apex cannot have a CNAME record)' : ''}`;
}

/** The observation of a domain for which the service has no target (none set, or an apex when only a CNAME is). */
export function noTarget(kind: DomainKind, targets: RoutingTargets): RoutingObservation {
  const message =
    kind === 'apex' && targets.cname !== undefined
      ? 'Not checked: this name is an apex, which cannot have a CNAME record, and the service has no addresses (DOMAIN_TARGET_A, DOMAIN_TARGET_AAAA) to point it at.'
      : 'Not checked: the service has no routing target (DOMAIN_TARGET_CNAME, DOMAIN_TARGET_A, DOMAIN_TARGET_AAAA).';
  return { code: 'no_target', message, observed: EMPTY_OBSERVED };
}

/** The observation of a domain not checked yet. */
export function routingNotChecked(name: string, kind: DomainKind, targets: RoutingTargets): RoutingObservation {
  if (routingWay(kind, targets) === 'none') return noTarget(kind, targets);
  return {
    code: 'not_checked',
    message: `Not checked yet. Publish ${instructions(name, kind, targets)}, then POST /domains/{id}/verify.`,
    observed: EMPTY_OBSERVED,
  };
}

const list = (values: string[]) => values.join(', ');

/**
 * What one lookup shows. `pointed`: the CNAME chain reaches the CNAME target, or every address answered is one of
 * the target addresses; `partly_pointed`: some are, some not; `not_pointed`: the name resolves elsewhere;
 * `missing`: no CNAME, A or AAAA record; `lookup_failed`: a lookup failed and nothing else decided.
 */
export function observeRouting(
  name: string,
  kind: DomainKind,
  targets: RoutingTargets,
  result: RoutingLookupResult,
): RoutingObservation {
  if (routingWay(kind, targets) === 'none') return noTarget(kind, targets);
  const observed: RoutingObserved = {
    cname: valuesOf(result.cname).slice(0, MAX_CNAME_HOPS),
    a: valuesOf(result.a).slice(0, MAX_OBSERVED_ADDRESSES),
    aaaa: valuesOf(result.aaaa).slice(0, MAX_OBSERVED_ADDRESSES),
  };
  const publish = instructions(name, kind, targets);
  if (targets.cname !== undefined && observed.cname.includes(targets.cname)) {
    return { code: 'pointed', message: `${name} is pointed: its CNAME reaches ${targets.cname}.`, observed };
  }
  const answered = [...valuesOf(result.a), ...valuesOf(result.aaaa)];
  const wanted = new Set([...targets.a, ...targets.aaaa]);
  const ours = answered.filter((address) => wanted.has(canonicalAddress(address)));
  const others = answered.filter((address) => !wanted.has(canonicalAddress(address)));
  if (ours.length > 0 && others.length === 0) {
    return { code: 'pointed', message: `${name} is pointed: it resolves to ${list(ours)}.`, observed };
  }
  if (ours.length > 0) {
    return {
      code: 'partly_pointed',
      message: `${name} is partly pointed: it resolves to ${list(ours)}, but also to ${list(others)}, which are not the service's; remove those records (an old record left beside the new one sends some visitors elsewhere).`,
      observed,
    };
  }
  if ([result.cname, result.a, result.aaaa].some(failed)) {
    const errors = [result.cname, result.a, result.aaaa].filter(failed).map((r) => ('error' in r ? r.error : ''));
    return {
      code: 'lookup_failed',
      message: `Could not look ${name} up (${[...new Set(errors)].join(', ')}). Nothing was changed; the service will try again.`,
      observed,
    };
  }
  if (observed.cname.length > 0 || others.length > 0) {
    const found = [
      observed.cname.length > 0 ? `a CNAME to ${observed.cname[0]}` : '',
      others.length > 0 ? list(others) : '',
    ].filter((part) => part !== '');
    return {
      code: 'not_pointed',
      message: `${name} is not pointed at the service: it resolves to ${found.join(' and ')}. Publish ${publish} instead.`,
      observed,
    };
  }
  return { code: 'missing', message: `No CNAME, A or AAAA record at ${name}. Publish ${publish}.`, observed };
}
