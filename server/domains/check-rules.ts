// The rules of domain states as pure functions: what a DNS answer shows (an observation), and what a check's
// observation does to a domain's state and to the time of its next check. No I/O here: states.ts applies them.

export const DOMAIN_STATUSES = ['pending', 'active', 'misconfigured', 'claimed_elsewhere', 'expired'] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];

export type ObservationCode =
  | 'found'
  | 'missing'
  | 'wrong_value'
  | 'several_values'
  | 'lookup_failed'
  | 'held_elsewhere'
  | 'not_checked'
  | 'grandfathered'
  | 'test_zone';

export interface Observation {
  code: ObservationCode;
  message: string;
  /** Up to MAX_SHOWN_VALUES of the values seen, each cut to MAX_SHOWN_LENGTH characters (and an ellipsis). */
  values: string[];
}

/** What a TXT lookup gave: the records' values (each record's strings joined), or the resolver's error code. */
export type LookupResult = { values: string[] } | { error: string };

export const CHALLENGE_LABEL = '_dss-challenge';
export const TOKEN_PREFIX = 'dss-verify=';
export const MAX_SHOWN_VALUES = 5;
export const MAX_SHOWN_LENGTH = 100;
/** Records past this many are not looked at (a DNS message is bounded anyway; this bounds our work further). */
export const MAX_RECORDS_READ = 400;

export const challengeName = (name: string) => `${CHALLENGE_LABEL}.${name}`;

/** The longest DNS name in characters, without the trailing dot (RFC 1035: 255 octets on the wire). */
const MAX_DNS_NAME_LENGTH = 253;
/** The longest domain name whose challenge name is still a DNS name (238). */
const MAX_CHECKABLE_NAME_LENGTH = MAX_DNS_NAME_LENGTH - CHALLENGE_LABEL.length - 1;

/**
 * Why a (stored, ASCII) domain name cannot be checked, or undefined when it can: its challenge name must be a
 * DNS name, or every lookup of it fails before any query is sent. The name's own labels are the host-name
 * rule's (fields.ts); the challenge label is ours and valid, so only the whole length can go wrong.
 */
export function uncheckableName(name: string): string | undefined {
  if (challengeName(name).length <= MAX_DNS_NAME_LENGTH) return undefined;
  return (
    `must be at most ${MAX_CHECKABLE_NAME_LENGTH} characters (this one has ${name.length} in its stored form): ` +
    `its verification record ${CHALLENGE_LABEL}.<name> must be a DNS name of at most ${MAX_DNS_NAME_LENGTH}`
  );
}
export const challengeValue = (token: string) => `${TOKEN_PREFIX}${token}`;

/** The sandbox's test zone: its names verify at once in the sandbox and never elsewhere. */
export const TEST_ZONE = 'dss-test.example';
export const inTestZone = (name: string) => name === TEST_ZONE || name.endsWith(`.${TEST_ZONE}`);

// Node's resolver error codes, as a person reads them.
const FAILURES: Record<string, string> = {
  ETIMEOUT: 'no DNS server answered in time (timeout)',
  ESERVFAIL: 'the DNS server answered SERVFAIL',
  EREFUSED: 'the DNS server refused the query (REFUSED)',
  ECONNREFUSED: 'the DNS server could not be reached (connection refused)',
  EBADRESP: 'the DNS server sent a malformed answer',
  ENOTIMP: 'the DNS server does not implement this query (NOTIMP)',
  EFORMERR: 'the DNS server rejected the query as malformed (FORMERR)',
};

const shown = (values: readonly string[]) =>
  values
    .slice(0, MAX_SHOWN_VALUES)
    .map((value) => (value.length > MAX_SHOWN_LENGTH ? `${value.slice(0, MAX_SHOWN_LENGTH)}…` : value));

/** What one lookup of the domain's challenge record shows, for a person to act on. */
export function observe(result: LookupResult, name: string, token: string): Observation {
  const record = challengeName(name);
  const expected = challengeValue(token);
  if ('error' in result) {
    if (result.error === 'EBADNAME') {
      // A name stored before the length rule (uncheckableName): no record can ever be there.
      return {
        code: 'missing',
        message: `Not found: ${record} is not a valid DNS name (over ${MAX_DNS_NAME_LENGTH} characters), so no TXT record can be published there.`,
        values: [],
      };
    }
    if (result.error === 'ENOTFOUND' || result.error === 'ENODATA') {
      const why = result.error === 'ENOTFOUND' ? `${record} does not exist (NXDOMAIN)` : `no TXT record at ${record}`;
      return {
        code: 'missing',
        message: `Not found: ${why}. Publish a TXT record at ${record} with the value ${expected}.`,
        values: [],
      };
    }
    const why = FAILURES[result.error] ?? `the lookup failed (${result.error})`;
    return {
      code: 'lookup_failed',
      message: `Could not look ${record} up: ${why}. Nothing was changed; the service will try again.`,
      values: [],
    };
  }
  const values = result.values.slice(0, MAX_RECORDS_READ);
  if (values.includes(expected)) {
    return {
      code: 'found',
      message: `Found the TXT record at ${record} with this domain's value.`,
      values: shown(values),
    };
  }
  if (values.length === 0) {
    return {
      code: 'missing',
      message: `Not found: no TXT record at ${record}. Publish one with the value ${expected}.`,
      values: [],
    };
  }
  if (values.length === 1) {
    return {
      code: 'wrong_value',
      message: `The TXT record at ${record} has another value; set it to ${expected} exactly.`,
      values: shown(values),
    };
  }
  return {
    code: 'several_values',
    message: `${record} has ${result.values.length} TXT records, none with this domain's value; add one with ${expected}.`,
    values: shown(values),
  };
}

/** The periods of the check schedule, in milliseconds (configuration: DOMAIN_CHECK_* in server/config.ts). */
export interface CheckSchedule {
  /** How often an active domain is checked. */
  activeIntervalMs: number;
  /** How often a misconfigured domain is checked during its grace period. */
  misconfiguredIntervalMs: number;
  /** How long a misconfigured domain keeps its name. */
  graceMs: number;
  /** How long a pending claim is checked before it expires. */
  pendingExpiryMs: number;
  /** The first and the longest wait between checks of a pending domain (the wait doubles in between). */
  pendingFirstMs: number;
  pendingMaxMs: number;
  /** The wait after a failed lookup (at most the state's own interval). */
  retryMs: number;
}

export const DEFAULT_SCHEDULE: CheckSchedule = {
  activeIntervalMs: 3_600_000,
  misconfiguredIntervalMs: 300_000,
  graceMs: 72 * 3_600_000,
  pendingExpiryMs: 7 * 24 * 3_600_000,
  pendingFirstMs: 60_000,
  pendingMaxMs: 3_600_000,
  retryMs: 300_000,
};

export interface DomainState {
  status: DomainStatus;
  /** When it entered `status`. */
  since: Date;
}

export interface CheckOutcome {
  status: DomainStatus;
  since: Date;
  /** When to check next; null: not any more. */
  nextCheckAt: Date | null;
  /** Whether the record was found (verified_at becomes now). */
  verified: boolean;
}

const later = (now: Date, ms: number) => new Date(now.getTime() + ms);
const earliest = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);

/** The shortest wait before a domain is checked again, whatever the schedule: never again at once. */
const MIN_RECHECK_MS = 1000;

/** A pending domain's next check: the wait doubles with the claim's age (about 1, 2, 4 … minutes), capped. */
function pendingNext(since: Date, now: Date, schedule: CheckSchedule): Date {
  const age = now.getTime() - since.getTime();
  const wait = Math.min(Math.max(age, schedule.pendingFirstMs, MIN_RECHECK_MS), schedule.pendingMaxMs);
  return earliest(later(now, wait), later(since, schedule.pendingExpiryMs));
}

/**
 * A misconfigured domain's next check: at its interval, and once more when its grace ends. Past the grace (only
 * a failed lookup keeps it there: it cannot tell whether the record is back) it is backed off at its interval.
 */
function misconfiguredNext(since: Date, now: Date, schedule: CheckSchedule): Date {
  const graceEnds = later(since, schedule.graceMs);
  const interval = later(now, schedule.misconfiguredIntervalMs);
  return graceEnds.getTime() > now.getTime() ? earliest(interval, graceEnds) : interval;
}

/** The interval a state is checked at when nothing changes; null for states not checked. Never in the past. */
function nextInState(state: DomainState, now: Date, schedule: CheckSchedule): Date | null {
  switch (state.status) {
    case 'pending':
      return pendingNext(state.since, now, schedule);
    case 'active':
      return later(now, schedule.activeIntervalMs);
    case 'misconfigured':
      return misconfiguredNext(state.since, now, schedule);
    default:
      return null;
  }
}

/**
 * A check's effect. `found` means the record is there and the name is this domain's to hold (states.ts turns a
 * record found while another account still proves the name into `held_elsewhere`). A failed lookup changes no
 * state, only brings the next check closer, with one exception: a pending claim past its expiry expires (its
 * owner never proved it, and the claim must not be retried for ever). The next check is never in the past.
 */
export function afterCheck(
  state: DomainState,
  code: ObservationCode,
  now: Date,
  schedule: CheckSchedule,
): CheckOutcome {
  const stay = (nextCheckAt: Date | null): CheckOutcome => ({ ...state, nextCheckAt, verified: false });
  const become = (status: DomainStatus, verified = false): CheckOutcome => {
    const moved = { status, since: now };
    return { ...moved, nextCheckAt: nextInState(moved, now, schedule), verified };
  };
  if (code === 'found' || code === 'test_zone') {
    return state.status === 'active'
      ? { ...state, nextCheckAt: later(now, schedule.activeIntervalMs), verified: true }
      : become('active', true);
  }
  const age = now.getTime() - state.since.getTime();
  if (code === 'lookup_failed') {
    if (state.status === 'pending' && age >= schedule.pendingExpiryMs) return become('expired');
    const next = nextInState(state, now, schedule);
    return stay(next && earliest(next, later(now, schedule.retryMs)));
  }
  // missing, wrong_value, several_values, held_elsewhere: the record that proves this domain is not there.
  switch (state.status) {
    case 'pending':
      return age >= schedule.pendingExpiryMs ? become('expired') : stay(pendingNext(state.since, now, schedule));
    case 'active':
      return code === 'held_elsewhere' ? stay(later(now, schedule.activeIntervalMs)) : become('misconfigured');
    case 'misconfigured':
      return age >= schedule.graceMs ? become('expired') : stay(nextInState(state, now, schedule));
    default:
      return stay(null);
  }
}

/**
 * The states that hold a name: others cannot store or prove it while the holder's record is there. The partial
 * unique index `domains_name_holder` (migration 0005) lets one domain per name be in them.
 */
export const HOLDING_STATES = ['active', 'misconfigured'] as const satisfies readonly DomainStatus[];

/** Whether a domain in this status holds its name. */
export const holdsName = (status: string) => (HOLDING_STATES as readonly string[]).includes(status);

/** The per-domain verify limit's window: when it started and how many verifies it counted. */
export interface VerifyWindow {
  startedAt: Date | null;
  count: number;
}

/**
 * Counts one more verify in the window (a new window when the last one is over), or says in how many whole
 * seconds (at least 1) the window ends when its quota is spent.
 */
export function countVerify(
  window: VerifyWindow,
  quota: { limit: number; windowSeconds: number },
  now: Date,
): VerifyWindow | { retryAfterSeconds: number } {
  const endsAt = window.startedAt ? window.startedAt.getTime() + quota.windowSeconds * 1000 : 0;
  if (endsAt <= now.getTime()) return { startedAt: now, count: 1 };
  if (window.count < quota.limit) return { startedAt: window.startedAt, count: window.count + 1 };
  return { retryAfterSeconds: Math.max(1, Math.ceil((endsAt - now.getTime()) / 1000)) };
}
