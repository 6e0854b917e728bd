// A quota as configured (RATE_LIMIT, AUTH_FAILURE_LIMIT, DOMAIN_VERIFY_LIMIT): shared by the HTTP rate limits
// and the domains' verify limit, which the domain counts itself; and the fixed windows in which a process counts
// hits per key (the per-key quota's in memory, the workers' primary's, a worker's own while the primary is silent).

/** `limit` requests per `windowSeconds`, counted in fixed windows that start with the first request. */
export interface Quota {
  limit: number;
  windowSeconds: number;
}

export type Operation = 'get' | 'increment' | 'decrement' | 'reset';

/** One fixed window per key, as express-rate-limit's MemoryStore keeps them: its hits, and when it ends. */
export class Windows {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();

  apply(
    operation: Operation,
    key: string,
    windowMs: number,
    now = Date.now(),
  ): { totalHits: number; resetAt?: number } {
    let window = this.windows.get(key);
    if (window && window.resetAt <= now) {
      this.windows.delete(key);
      window = undefined;
    }
    if (operation === 'reset') {
      this.windows.delete(key);
      return { totalHits: 0 };
    }
    if (operation === 'increment') {
      window ??= { hits: 0, resetAt: now + windowMs };
      window.hits++;
      this.windows.set(key, window);
    } else if (operation === 'decrement' && window && window.hits > 0) {
      window.hits--;
    }
    return window ? { totalHits: window.hits, resetAt: window.resetAt } : { totalHits: 0 };
  }

  /** Forgets the windows that have ended, so that memory follows the keys seen in one window. */
  prune(now = Date.now()): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
  }
}
