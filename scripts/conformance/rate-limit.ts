// Rate limits: every answer's IETF RateLimit and RateLimit-Policy fields (draft 8) must be present (once the
// target uses them at all) and coherent; with --rate-limit-budget, the run spends the key's quota until a 429
// with Retry-After. A 429 met anywhere else is waited out (Retry-After) and the request sent again.

import { parseRateLimitItems, rateLimitInteger } from '../../client/src/rate-limit.js';
import type { Operation } from '../../server/spec-model.js';
import type { Context } from './context.js';
import type { Exchange } from './http.js';
import { limitation } from './profiles.js';

/** The longest Retry-After the run waits out before a request is sent again; a longer one is the answer. */
export const MAX_RETRY_AFTER_SECONDS = 120;
/** How often one request is sent again after a 429. */
export const MAX_RATE_LIMIT_RETRIES = 3;

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
  const value = exchange.reply.headers['retry-after']?.trim();
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}

/**
 * The rate_limited check: list requests with the primary key until a 429, at most `budget` of them. The 429 must
 * carry Retry-After in seconds (no longer than the window) and say r=0; it must come no later than the
 * quota the first answer announced allows. When `r` goes up, a new window began on the way (a slow run can reach
 * the end of the one it started in): the count starts again from that answer.
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
  let previous: number | undefined;
  // The request the current window's count starts from.
  let start = 1;
  for (let sent = 1; sent <= budget; sent++) {
    const exchange = await send(operation);
    if (exchange.reply.status === 0) {
      ctx.results.fail(operation.id, check, 'no answer while spending the budget', exchange);
      return;
    }
    const remaining = rateLimitInteger(
      parseRateLimitItems(exchange.reply.headers.ratelimit ?? '')?.[0]?.parameters.get('r'),
    );
    if (sent === 1 && remaining !== undefined) announced = remaining;
    if (remaining !== undefined && previous !== undefined && remaining > previous) {
      announced = remaining;
      start = sent;
    }
    if (remaining !== undefined) previous = remaining;
    if (exchange.reply.status !== 429) {
      if (announced !== undefined && sent - start + 1 > announced + 1 + ctx.concurrency) {
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
    const window = rateLimitInteger(
      parseRateLimitItems(exchange.reply.headers['ratelimit-policy'] ?? '')?.[0]?.parameters.get('w'),
    );
    if (retryAfter !== undefined && window !== undefined && retryAfter > window)
      problems.push(`Retry-After ${retryAfter} is longer than the window w=${window}`);
    if (remaining !== undefined && remaining !== 0) problems.push(`the 429 says r=${remaining}, not 0`);
    ctx.results.judge(operation.id, check, problems.length ? problems.join('; ') : undefined, exchange);
    ctx.log(`rate limit: 429 after ${sent} requests, Retry-After ${retryAfter ?? 'missing'}`);
    return;
  }
  ctx.results.fail(operation.id, check, `no 429 within the budget of ${budget} requests`);
}
