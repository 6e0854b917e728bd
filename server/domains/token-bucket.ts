// A token bucket: at most `perSecond` tokens a second on average, at most `perSecond` at once. It bounds the DNS
// queries the scheduler sends; the clock is a parameter so that the rule is tested without waiting.
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perSecond;
    this.last = now();
  }

  /** Whole tokens available now. */
  available(): number {
    const at = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((at - this.last) / 1000) * this.perSecond);
    this.last = at;
    return Math.floor(this.tokens);
  }

  /** Takes `count` tokens (callers take at most what `available` said). */
  take(count: number): void {
    this.tokens -= count;
  }

  /** Milliseconds until one whole token is available. */
  msUntilNext(): number {
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.perSecond) * 1000);
  }
}
