// When a failed delivery is tried again: the Standard Webhooks schedule (immediately, then 5 s, 5 min, 30 min,
// 2 h, 5 h, 10 h, 10 h), each delay jittered so that an endpoint that comes back is not hit by every retry at
// once, and a Retry-After of the endpoint's own (429, 503) honoured within bounds.

/** The delays after the 1st, 2nd, … failed attempt, in seconds; the first attempt is immediate. */
export const STANDARD_RETRY_SCHEDULE_S = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/** Each delay is multiplied by a factor drawn evenly from [1 - JITTER, 1 + JITTER]. */
export const JITTER = 0.2;

/** The longest Retry-After honoured: a longer one is cut to this, so an endpoint cannot park its queue for ever. */
export const MAX_RETRY_AFTER_S = 86_400;

/**
 * The delay before the attempt after `failedAttempts` failures (1 after the first), in milliseconds; undefined
 * when the schedule is spent and the delivery gives up. `random` is in [0, 1).
 */
export function retryDelayMs(
  failedAttempts: number,
  schedule: readonly number[],
  random: number,
  retryAfterS?: number,
): number | undefined {
  const base = schedule[failedAttempts - 1];
  if (base === undefined) return undefined;
  const jittered = base * (1 - JITTER + 2 * JITTER * random);
  const wait = retryAfterS === undefined ? jittered : Math.max(jittered, Math.min(retryAfterS, MAX_RETRY_AFTER_S));
  return Math.round(wait * 1000);
}

/**
 * A Retry-After header (RFC 9110 §10.2.3) as seconds from `now`: delta-seconds, or an HTTP date. Undefined
 * when absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now: number): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text);
  if (!/^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** Whether an answer's status asks for the endpoint's Retry-After to be honoured. */
export const honoursRetryAfter = (status: number) => status === 429 || status === 503;
