// The fetch under openapi-fetch: retries 429, 503 and network errors of idempotent methods, and of a POST that
// carries an Idempotency-Key, with exponential backoff and full jitter, honouring Retry-After. Sitting under
// openapi-fetch, it serves `api.raw` too.
import { type Call, sleep, untilAborted } from './call.js';
import { retryAfterMs } from './errors.js';

/** A fetch to send with. It gets a Request and an init carrying the call's signal: pass both along. */
export type Fetch = (input: Request, init?: RequestInit) => Promise<Response>;

export interface RetrySettings {
  fetch: Fetch;
  maxRetries: number;
  maxRetryDelayMs: number;
}

// PUT and PATCH set the same fields again; a repeated DELETE answers 404. A POST only with an Idempotency-Key:
// the server then runs it once and answers a repeat with the saved answer, so a retry cannot create twice.
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'DELETE']);
const IN_PROGRESS = '/problems/idempotency-key-in-use';
const retriedStatuses = new Set([429, 503]);
const baseDelayMs = 250;
const maxBackoffMs = 8_000;

export async function fetchWithRetries(request: Request, call: Call, settings: RetrySettings): Promise<Response> {
  const keyed = request.method === 'POST' && request.headers.has('Idempotency-Key');
  const retryable = keyed || idempotentMethods.has(request.method);
  for (let attempt = 0; ; attempt++) {
    const last = !retryable || attempt >= settings.maxRetries;
    let response: Response;
    try {
      // A clone per attempt: a body can be read once. The signal goes in the init, not in a new Request: Node
      // 20's fetch can lose an abort that reaches it through a Request that was garbage collected.
      response = await untilAborted(settings.fetch(request.clone(), { signal: call.signal }), call);
    } catch (error) {
      if (last || call.signal.aborted) throw call.failure(error);
      await sleep(backoffMs(attempt, settings), call);
      continue;
    }
    if (last || !(retriedStatuses.has(response.status) || (keyed && (await stillRunning(response))))) return response;
    const delay = retryAfterMs(response.headers.get('Retry-After')) ?? backoffMs(attempt, settings);
    // Waiting longer than allowed, or past the timeout, helps nobody: the caller gets the answer (an ApiError
    // with retryAfter) now.
    if (delay > settings.maxRetryDelayMs || delay >= call.remainingMs()) return response;
    await discard(response);
    await sleep(delay, call);
  }
}

/** A 409 saying the first request with this Idempotency-Key is still running: its answer comes on a retry. */
async function stillRunning(response: Response): Promise<boolean> {
  if (response.status !== 409) return false;
  try {
    const body = (await response.clone().json()) as { type?: unknown } | null;
    return body?.type === IN_PROGRESS;
  } catch {
    return false;
  }
}

/** Full jitter: a random wait between 0 and the exponential bound, so clients that failed together spread out. */
function backoffMs(attempt: number, settings: RetrySettings): number {
  const bound = Math.min(baseDelayMs * 2 ** attempt, maxBackoffMs, settings.maxRetryDelayMs);
  return Math.random() * bound;
}

async function discard(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // The connection is gone already; nothing to free.
  }
}
