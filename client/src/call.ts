// One call's lifetime: the client's and the caller's signals and the timeout joined into one signal that every
// attempt, every wait between attempts and the reading of the answer share; and what an abort turns into.
import { DomainSpaceError, NetworkError, TimeoutError } from './errors.js';

export interface Call {
  readonly signal: AbortSignal;
  /** Milliseconds left before the timeout (Infinity without one). */
  remainingMs(): number;
  /** The error to throw for a failure during the call: a TimeoutError, the caller's abort reason, a NetworkError. */
  failure(error: unknown): unknown;
  /** Stops the timer and lets go of the caller's signals. */
  done(): void;
}

/** timeoutMs 0 means no timeout. AbortSignal.any is not used: older browsers lack it. */
export function startCall(signals: readonly (AbortSignal | undefined)[], timeoutMs: number): Call {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  let timedOut = false;
  let abortedByCaller = false;
  const deadline = timeoutMs > 0 ? Date.now() + timeoutMs : Number.POSITIVE_INFINITY;

  const abortBy = (signal: AbortSignal) => {
    if (controller.signal.aborted) return;
    abortedByCaller = true;
    controller.abort(signal.reason);
  };
  for (const signal of signals) {
    if (!signal) continue;
    if (signal.aborted) {
      abortBy(signal);
      break;
    }
    const onAbort = () => abortBy(signal);
    signal.addEventListener('abort', onAbort, { once: true });
    cleanups.push(() => signal.removeEventListener('abort', onAbort));
  }
  if (timeoutMs > 0 && !controller.signal.aborted) {
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new TimeoutError(timeoutMs));
    }, timeoutMs);
    cleanups.push(() => clearTimeout(timer));
  }

  return {
    signal: controller.signal,
    remainingMs: () => deadline - Date.now(),
    failure(error) {
      if (error instanceof DomainSpaceError) return error;
      if (timedOut) return new TimeoutError(timeoutMs);
      // What fetch itself rejects with: the caller's reason, by default a DOMException named AbortError.
      if (abortedByCaller) return controller.signal.reason;
      if (error instanceof SyntaxError) {
        return new DomainSpaceError(`The answer was not valid JSON: ${error.message}`, { cause: error });
      }
      return new NetworkError(error);
    },
    done() {
      for (const cleanup of cleanups) cleanup();
    },
  };
}

/** Waits ms, or rejects with the call's failure as soon as its signal aborts. */
export function sleep(ms: number, call: Call): Promise<void> {
  const { signal } = call;
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(call.failure(signal.reason));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(call.failure(signal.reason));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Settles as the promise does, or rejects with the call's failure as soon as its signal aborts, even when the
 * fetch underneath misses the abort: Node 20's fetch can lose an abort that reaches it through a Request's
 * signal once that Request is garbage collected, and a custom fetch may ignore the signal altogether.
 */
export function untilAborted<T>(promise: Promise<T>, call: Call): Promise<T> {
  const { signal } = call;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(call.failure(signal.reason));
      // Free the connection of an answer that arrives after all.
      promise.then((value) => (value instanceof Response ? value.body?.cancel() : undefined)).catch(() => {});
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
