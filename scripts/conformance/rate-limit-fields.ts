// What a run has seen of the IETF RateLimit and RateLimit-Policy fields (draft 8) per policy, to judge whether
// the next answer's fields are coherent. The fields are read by the client's reader (client/src/rate-limit.ts).
import { parseRateLimitItems, rateLimitInteger } from '../../client/src/rate-limit.js';
import type { Exchange } from './http.js';

interface Seen {
  remaining: number;
  /**
   * The earliest the window that answer counted in can end (ms): its request's sending time plus its `t`, less
   * a second for `t`'s rounding. The sending time, not the arrival: on a loaded machine an answer is read long
   * after the server wrote it, and a window end reckoned from then lies in the future after the window reset.
   */
  endsNoSoonerThan: number;
  /** When that answer arrived (ms). */
  arrivedAt: number;
}

/** How many recent answers per policy are kept to judge the next ones by. */
const HISTORY = 500;

/** What the run has seen of the fields: whether the target uses them, and the last state per policy. */
export class RateLimitTracker {
  withFields = 0;
  /** Answers without the fields, judged at the end once it is known whether the target uses them. */
  readonly without: Array<{ subject: string; exchange: Exchange }> = [];
  private readonly history = new Map<string, Seen[]>();

  constructor(private readonly slack: number) {}

  /** Problems with the fields of one answer, or undefined when they are coherent (or absent). */
  observe(subject: string, exchange: Exchange, now = Date.now()): string | undefined | 'absent' {
    const { headers } = exchange.reply;
    const state = headers.ratelimit;
    const policy = headers['ratelimit-policy'];
    if (state === undefined && policy === undefined) {
      if (this.without.length < 1000) this.without.push({ subject, exchange });
      return 'absent';
    }
    this.withFields++;
    if (state === undefined) return 'RateLimit-Policy came without RateLimit';
    if (policy === undefined) return 'RateLimit came without RateLimit-Policy';
    const states = parseRateLimitItems(state);
    const policies = parseRateLimitItems(policy);
    if (!states) return `RateLimit does not parse as a list of policy items: ${state}`;
    if (!policies) return `RateLimit-Policy does not parse as a list of policy items: ${policy}`;
    for (const item of states) {
      const remaining = rateLimitInteger(item.parameters.get('r'));
      const reset = rateLimitInteger(item.parameters.get('t'));
      if (remaining === undefined) return `RateLimit "${item.name}" has no integer r (remaining)`;
      const quota = policies.find((each) => each.name === item.name);
      if (!quota) return `RateLimit names "${item.name}", which RateLimit-Policy does not`;
      const limit = rateLimitInteger(quota.parameters.get('q'));
      const window = rateLimitInteger(quota.parameters.get('w'));
      if (limit === undefined) return `RateLimit-Policy "${item.name}" has no integer q (quota)`;
      if (remaining > limit) return `RateLimit "${item.name}": r=${remaining} is more than the quota q=${limit}`;
      if (reset !== undefined && window !== undefined && reset > window)
        return `RateLimit "${item.name}": t=${reset} is longer than the window w=${window}`;
      const key = `${item.name}\u0000${quota.parameters.get('pk') ?? ''}`;
      const sentAt = exchange.sentAt ?? now;
      const endsNoSoonerThan = sentAt + ((reset ?? window ?? 0) - 1) * 1000;
      // Within one window the count only goes down. The yardstick is what had arrived before this request was
      // sent (a slow upload is counted when it starts, and answers after many others) and counted in a window
      // that cannot have ended before this answer came (a reset gives the whole quota back, however slow the
      // machine); requests sent together may still be counted in another order, hence the slack.
      const seen = this.history.get(key) ?? [];
      const past = seen.filter((each) => each.arrivedAt <= sentAt && now < each.endsNoSoonerThan);
      const floor = past.length > 0 ? Math.min(...past.map((each) => each.remaining)) : undefined;
      if (floor !== undefined && remaining > floor + this.slack) {
        return `RateLimit "${item.name}": r went up from ${floor} to ${remaining} within one window`;
      }
      seen.push({ remaining, endsNoSoonerThan, arrivedAt: now });
      if (seen.length > HISTORY) seen.shift();
      this.history.set(key, seen);
    }
    return undefined;
  }
}
