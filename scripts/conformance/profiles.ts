// What a mock cannot honour, and why. Under `--profile mock` these are reported as skipped with the reason,
// never as passed; everything else is held to the spec as for any server.
import type { Context } from './context.js';
import type { CheckName } from './results.js';

export const STATEFUL_REASON_MOCK = 'profile mock: a mock keeps no state, so nothing created can be read back';

/** Keyed by "check:variant" (or the check alone for every variant). */
const MOCK_LIMITATIONS: Record<string, string> = {
  'auth_required:wrong_key': 'a mock cannot know which keys exist: Prism accepts any well-formed bearer token',
  'invalid_input_rejected:unknown_query': 'Prism ignores query parameters the spec does not list',
  'invalid_input_rejected:unknown_form_field': 'Prism does not enforce additionalProperties on form bodies',
  'invalid_input_rejected:object_as_text':
    'Prism reads no objects from form bodies (`metadata[key]=value`): it accepts any text sent in their place',
  'invalid_input_rejected:bad_format':
    'Prism does not know the spec’s own formats (idn-hostname, http-url, space-name) and accepts any string',
  'invalid_input_rejected:malformed_body': 'Prism answers unparseable JSON with its own 400 body, not the spec’s',
  method_not_allowed: 'Prism answers undocumented methods from its router: 405 without Allow, not the spec’s error',
  not_acceptable:
    'Prism answers an unacceptable Accept with its own 406 body (no request_id, no X-Request-Id), and a DELETE with 204 whatever the Accept',
  body_too_large: 'Prism has no body size limit: it accepts a 1 MiB body',
  'odd_ids:1e3': 'Prism reads the path segment "1e3" as the integer 1000',
  'odd_ids:1?x=1': 'Prism ignores query parameters the spec does not list',
  duplicate_credentials: 'a mock cannot know which keys exist: Prism accepts any well-formed bearer token',
  scope_enforced: 'a mock cannot know what a key may do: Prism accepts any well-formed bearer token for any operation',
  head_like_get:
    'Prism answers HEAD without the Content-Type its GET has (and flags its own answer as a violation of the spec)',
  problem_accept:
    'Prism negotiates Accept against the success response alone: it answers 406 to application/problem+json where the success is application/json',
  duplicate_idempotency_key: 'a mock keeps no idempotency keys: Prism answers a create with two of them as any create',
  rate_limit_headers:
    'a mock counts no requests: Prism sends the example RateLimit fields on some answers and none on its own errors',
  // Only the time is skipped: the over-long path must still get a 4xx problem.
  'long_path:timing':
    'Prism resolves a path in time that grows with its length (16,000 slashes: 60–140 ms more than a short path), so its time is not judged; its 404 problem is',
};

/** Why this check (variant) is skipped for the run's profile, or undefined when it runs. */
export function limitation(ctx: Context, check: CheckName, variant?: string): string | undefined {
  if (ctx.profile !== 'mock') return undefined;
  const reason =
    (variant !== undefined ? MOCK_LIMITATIONS[`${check}:${variant}`] : undefined) ?? MOCK_LIMITATIONS[check];
  return reason && `profile mock: ${reason}`;
}
