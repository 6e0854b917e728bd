// Rate limits: every answer's IETF RateLimit and RateLimit-Policy fields (draft 8) must be present (once the
// target uses them at all) and coherent; with --rate-limit-budget, the run spends the key's quota until a 429
// with Retry-After. A 429 met anywhere else is waited out (Retry-After) and the request sent again.
import type { Context } from './context.js';
import type { Exchange } from './http.js';
import { limitation } from './profiles.js';
import type { Operation } from './spec-model.js';

/** The longest Retry-After the run waits out before a request is sent again; a longer one is the answer. */
export const MAX_RETRY_AFTER_SECONDS = 120;
/** How often one request is sent again after a 429. */
export const MAX_RATE_LIMIT_RETRIES = 3;

interface PolicyItem {
  name: string;
  parameters: Map<string, string>;
}

/** Items of a structured-field list such as `"a"; r=1; t=2, "b"; r=3; t=4`; undefined when it does not parse. */
export function parseItems(field: string): PolicyItem[] | undefined {
  const items: PolicyItem[] = [];
  for (const member of field.match(/(?:"(?:[^"\\]|\\.)*"|[^,])+/g) ?? []) {
    const [head = '', ...parameters] = member.split(';').map((part) => part.trim());
    const name = /^"((?:[^"\\]|\\.)*)"$/.exec(head)?.[1] ?? (/^[A-Za-z*][\w:.*/-]*$/.test(head) ? head : undefined);
    if (name === undefined) return undefined;
    const map = new Map<string, string>();
    for (const parameter of parameters) {
      const match = /^([a-z*][a-z0-9_.*-]*)=(.+)$/.exec(parameter);
      if (!match) return undefined;
      map.set(match[1] as string, match[2] as string);
    }
    items.push({ name, parameters: map });
  }
  return items.length > 0 ? items : undefined;
}

const integer = (value: string | undefined) => (value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined);

interface Seen {
  remaining: number;
  /** When the window ended, as of that answer (ms). */
  resetAt: number;
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
    const states = parseItems(state);
    const policies = parseItems(policy);
    if (!states) return `RateLimit does not parse as a list of policy items: ${state}`;
    if (!policies) return `RateLimit-Policy does not parse as a list of policy items: ${policy}`;
    for (const item of states) {
      const remaining = integer(item.parameters.get('r'));
      const reset = integer(item.parameters.get('t'));
      if (remaining === undefined) return `RateLimit "${item.name}" has no integer r (remaining)`;
      const quota = policies.find((each) => each.name === item.name);
      if (!quota) return `RateLimit names "${item.name}", which RateLimit-Policy does not`;
      const limit = integer(quota.parameters.get('q'));
      const window = integer(quota.parameters.get('w'));
      if (limit === undefined) return `RateLimit-Policy "${item.name}" has no integer q (quota)`;
      if (remaining > limit) return `RateLimit "${item.name}": r=${remaining} is more than the quota q=${limit}`;
      if (reset !== undefined && window !== undefined && reset > window)
        return `RateLimit "${item.name}": t=${reset} is longer than the window w=${window}`;
      const key = `${item.name}\u0000${quota.parameters.get('pk') ?? ''}`;
      const resetAt = now + (reset ?? window ?? 0) * 1000;
      // Within one window the count only goes down. The yardstick is what had arrived before this request was
      // sent (a slow upload is counted when it starts, and answers after many others); requests sent together
      // may still be counted in another order, hence the slack.
      const seen = this.history.get(key) ?? [];
      const sentAt = exchange.sentAt ?? now;
      const past = seen.filter((each) => each.arrivedAt <= sentAt && now + 1000 < each.resetAt);
      const floor = past.length > 0 ? Math.min(...past.map((each) => each.remaining)) : undefined;
      if (floor !== undefined && remaining > floor + this.slack) {
        return `RateLimit "${item.name}": r went up from ${floor} to ${remaining} within one window`;
      }
      seen.push({ remaining, resetAt, arrivedAt: now });
      if (seen.length > HISTORY) seen.shift();
      this.history.set(key, seen);
    }
    return undefined;
  }
}

/** The rate_limit_headers check on one answer (answers without the fields are judged at the end). */
export function checkRateLimitFields(ctx: Context, operation: Operation, exchange: Exchange): void {
  if (exchange.reply.status === 0 || limitation(ctx, 'rate_limit_headers')) return;
  const problem = ctx.rateLimit.observe(operation.id, exchange);
  if (problem !== 'absent') ctx.results.judge(operation.id, 'rate_limit_headers', problem, exchange);
}

/** Once every phase ran: answers without the fields fail when others had them; none at all is a skip. */
export function judgeMissingFields(ctx: Context): void {
  const { rateLimit, results } = ctx;
  const skipped = limitation(ctx, 'rate_limit_headers');
  if (skipped) {
    for (const operation of ctx.model.operations) results.skip(operation.id, 'rate_limit_headers', skipped);
    return;
  }
  if (rateLimit.withFields === 0) {
    for (const operation of ctx.model.operations) {
      results.skip(operation.id, 'rate_limit_headers', 'the target sent no RateLimit fields (no rate limits?)');
    }
    return;
  }
  for (const { subject, exchange } of rateLimit.without) {
    results.fail(
      subject,
      'rate_limit_headers',
      'no RateLimit and RateLimit-Policy, which other answers carry',
      exchange,
    );
  }
}

/** Seconds of a delta-seconds Retry-After, or undefined (absent, an HTTP date, garbage). */
export function retryAfterSeconds(exchange: Exchange): number | undefined {
  return integer(exchange.reply.headers['retry-after']?.trim());
}

/**
 * The rate_limited check: list requests with the primary key until a 429, at most `budget` of them. The 429 must
 * carry Retry-After in seconds (no longer than the window) and say r=0; it must come no later than the
 * quota the first answer announced allows.
 */
export async function spendBudget(
  ctx: Context,
  budget: number,
  send: (operation: Operation) => Promise<Exchange>,
): Promise<void> {
  const check = 'rate_limited';
  const operation =
    ctx.model.operations.find((op) => op.method === 'GET' && !op.path.includes('{') && op.security.length > 0) ??
    ctx.model.operations.find((op) => op.method === 'GET' && !op.path.includes('{'));
  if (!operation) return ctx.results.skip('(rate limit)', check, 'no GET operation without a path id to spend it on');
  let announced: number | undefined;
  for (let sent = 1; sent <= budget; sent++) {
    const exchange = await send(operation);
    if (exchange.reply.status === 0) {
      ctx.results.fail(operation.id, check, 'no answer while spending the budget', exchange);
      return;
    }
    const remaining = integer(parseItems(exchange.reply.headers.ratelimit ?? '')?.[0]?.parameters.get('r'));
    if (sent === 1 && remaining !== undefined) announced = remaining;
    if (exchange.reply.status !== 429) {
      if (announced !== undefined && sent > announced + 1 + ctx.concurrency) {
        ctx.results.fail(
          operation.id,
          check,
          'no 429 after the quota the first answer announced was spent',
          exchange,
          `the first answer said r=${announced}; request ${sent} still got ${exchange.reply.status}`,
        );
        return;
      }
      continue;
    }
    const retryAfter = retryAfterSeconds(exchange);
    const problems: string[] = [];
    if (retryAfter === undefined) problems.push('the 429 has no Retry-After in seconds');
    const window = integer(parseItems(exchange.reply.headers['ratelimit-policy'] ?? '')?.[0]?.parameters.get('w'));
    if (retryAfter !== undefined && window !== undefined && retryAfter > window)
      problems.push(`Retry-After ${retryAfter} is longer than the window w=${window}`);
    if (remaining !== undefined && remaining !== 0) problems.push(`the 429 says r=${remaining}, not 0`);
    ctx.results.judge(operation.id, check, problems.length ? problems.join('; ') : undefined, exchange);
    ctx.log(`rate limit: 429 after ${sent} requests, Retry-After ${retryAfter ?? 'missing'}`);
    return;
  }
  ctx.results.fail(operation.id, check, `no 429 within the budget of ${budget} requests`);
}
