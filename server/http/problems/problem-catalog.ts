// The problem catalog: every kind of problem the service answers with, its status and its title, in one table.
// A throw site names a kind (`new HttpProblem('not-found', …)`); the status comes from here. Each kind is
// documented under its anchor `#problem-<kind>` in the guide's "Problem types" table (spec/openapi.yaml's
// description), which test/unit/problem-catalog.test.ts holds to this table, both ways.

const BAD_REQUEST = { status: 400, title: 'Bad Request' } as const;
const UNAUTHORIZED = { status: 401, title: 'Unauthorized' } as const;
const FORBIDDEN = { status: 403, title: 'Forbidden' } as const;
const CONFLICT = { status: 409, title: 'Conflict' } as const;
const UNPROCESSABLE = { status: 422, title: 'Unprocessable Content' } as const;
const TOO_MANY = { status: 429, title: 'Too Many Requests' } as const;
const UNAVAILABLE = { status: 503, title: 'Service Unavailable' } as const;

export const PROBLEMS = {
  'malformed-body': BAD_REQUEST,
  'malformed-path': BAD_REQUEST,
  'malformed-query': BAD_REQUEST,
  'ambiguous-credentials': BAD_REQUEST,
  'ambiguous-idempotency-key': BAD_REQUEST,
  'malformed-request': BAD_REQUEST,
  unauthorized: UNAUTHORIZED,
  'key-expired': UNAUTHORIZED,
  'insufficient-scope': FORBIDDEN,
  'address-not-allowed': FORBIDDEN,
  'key-escalation': FORBIDDEN,
  'not-found': { status: 404, title: 'Not Found' },
  'method-not-allowed': { status: 405, title: 'Method Not Allowed' },
  'not-acceptable': { status: 406, title: 'Not Acceptable' },
  'request-timeout': { status: 408, title: 'Request Timeout' },
  conflict: CONFLICT,
  'domain-held-elsewhere': CONFLICT,
  'too-many-webhook-endpoints': CONFLICT,
  'webhook-queue-full': CONFLICT,
  'webhook-endpoint-disabled': CONFLICT,
  'webhook-recovery-running': CONFLICT,
  'idempotency-key-in-use': CONFLICT,
  'precondition-failed': { status: 412, title: 'Precondition Failed' },
  'content-too-large': { status: 413, title: 'Content Too Large' },
  'request-target-too-long': { status: 414, title: 'URI Too Long' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  // Fields or parameters that break the contract's schemas; each 422 below names another cause.
  validation: UNPROCESSABLE,
  'invalid-if-match': UNPROCESSABLE,
  'page-with-cursor': UNPROCESSABLE,
  'invalid-cursor': UNPROCESSABLE,
  'cursor-sort-mismatch': UNPROCESSABLE,
  'unsafe-webhook-url': UNPROCESSABLE,
  'idempotency-key-reused': UNPROCESSABLE,
  'rate-limited': TOO_MANY,
  'verify-rate-limited': TOO_MANY,
  'too-many-failed-authentications': TOO_MANY,
  'header-too-large': { status: 431, title: 'Request Header Fields Too Large' },
  internal: { status: 500, title: 'Internal Server Error' },
  'database-unavailable': UNAVAILABLE,
  'database-timeout': UNAVAILABLE,
  'database-busy': UNAVAILABLE,
  'storage-full': UNAVAILABLE,
  'storage-read-only': UNAVAILABLE,
  'storage-error': UNAVAILABLE,
  draining: UNAVAILABLE,
  'docs-not-built': UNAVAILABLE,
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemKind = keyof typeof PROBLEMS;

type Unprocessable = { [K in ProblemKind]: (typeof PROBLEMS)[K]['status'] extends 422 ? K : never }[ProblemKind];

/**
 * Every file that raises a 422, the kinds it raises and why there. The validation step answers "why a 422?" for
 * the contract and the request as a whole (request-validation.ts, asking the conventions' checks); the others need
 * what only their site has: a stored record, a lookup, the clock, a rule a second entry point shares, the saved
 * request. test/unit/problem-catalog.test.ts fails on a file raising a 422 that is not listed here, or on a listed
 * kind its file no longer raises; the guide's status table says the same to consumers.
 */
export const UNPROCESSABLE_SITES: Readonly<Record<string, { kinds: readonly Unprocessable[]; why: string }>> = {
  'server/http/validation/request-validation.ts': {
    kinds: ['validation'],
    why: "the contract's schemas and our own field checks (unknown fields, bad values, integers as text), in one 422",
  },
  'server/http/conventions/conditional.ts': {
    kinds: ['invalid-if-match'],
    why: 'an If-Match that is no list of ETags (asked by the validation step once the fields are valid)',
  },
  'server/http/conventions/pagination.ts': {
    kinds: ['page-with-cursor'],
    why: '`page` with `after` (asked by the validation step)',
  },
  'server/http/conventions/cursor.ts': {
    kinds: ['invalid-cursor', 'cursor-sort-mismatch'],
    why: 'a sorted list cursor not made here, or of a walk in another order (asked by the validation step)',
  },
  'server/http/conventions/id-cursor.ts': {
    kinds: ['invalid-cursor'],
    why: 'an id-ordered list cursor not made here or of another list (asked by the validation step; the handler reads it again)',
  },
  'server/http/conventions/list-filters.ts': {
    kinds: ['validation'],
    why: "a comma-separated filter value the list does not take (a domain's status, routing): one or several values, which the spec's pattern cannot list",
  },
  'server/http/conventions/metadata-limit.ts': {
    kinds: ['validation'],
    why: 'metadata over its key limit once merged with what the record holds: needs the stored record',
  },
  'server/domains/handlers.ts': {
    kinds: ['validation'],
    why: 'a domain name whose challenge name is no DNS name (domains/check-rules.ts, the rule the checks share)',
  },
  'server/webhooks/handlers.ts': {
    kinds: ['validation', 'unsafe-webhook-url'],
    why: "a URL whose host is not a safe target (resolved: a lookup), headers a delivery sets, a recovery window outside retention (the clock, the operator's retention)",
  },
  'server/events/handlers.ts': {
    kinds: ['validation'],
    why: "the event log's filters a format cannot judge (a time that does not exist, `until` not after `since`)",
  },
  'server/accounts/handlers.ts': {
    kinds: ['validation'],
    why: "a key's options and a rotation's overlap, by the rules the keys command shares (accounts/key-management.ts)",
  },
  'server/idempotency/runner.ts': {
    kinds: ['idempotency-key-reused'],
    why: 'an Idempotency-Key used before with another method, path or body: needs the saved request',
  },
};

/** Problem `type` URIs are relative to the service (RFC 9457 resolves them against the request URI). */
export const PROBLEM_TYPE_BASE = '/problems/';

/** The anchor of the kind's entry in the guide's "Problem types" table (and so in /docs). */
export const anchorOf = (kind: ProblemKind): string => `problem-${kind}`;
