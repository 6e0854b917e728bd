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

/** Problem `type` URIs are relative to the service (RFC 9457 resolves them against the request URI). */
export const PROBLEM_TYPE_BASE = '/problems/';

/** The anchor of the kind's entry in the guide's "Problem types" table (and so in /docs). */
export const anchorOf = (kind: ProblemKind): string => `problem-${kind}`;
