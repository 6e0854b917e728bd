// The deployment's request budget, as its RateLimit fields state it: the primary key's quota (what every request
// with the key spends) and the client address's budget for failed authentication (what the credential probes
// spend). The run reads both as it goes, says up front what it will do with them, and sizes the generated cases
// and the credential probes to fit, so that a run against a default deployment is not a minute of waiting per 429.

import { parseRateLimitItems, rateLimitInteger } from '../../client/src/rate-limit.js';
import type { Operation, Resource, SpecModel } from '../../server/spec-model.js';
import type { Case, Plan } from './cases.js';
import type { Exchange } from './http.js';

export interface Quota {
  /** The policy's name, e.g. "api-key". */
  policy: string;
  /** q: requests per window. */
  limit: number;
  /** w: the window, in seconds. */
  windowSeconds?: number;
  /** r: requests left in the current window. */
  remaining: number;
  /** t: seconds until the window ends. */
  resetSeconds?: number;
}

/** The tightest policy an answer states: the one with the fewest requests left. */
export function quotaOf(exchange: Exchange): Quota | undefined {
  const states = parseRateLimitItems(exchange.reply.headers.ratelimit ?? '');
  const policies = parseRateLimitItems(exchange.reply.headers['ratelimit-policy'] ?? '');
  let tightest: Quota | undefined;
  for (const state of states ?? []) {
    const remaining = rateLimitInteger(state.parameters.get('r'));
    const policy = policies?.find((each) => each.name === state.name);
    const limit = rateLimitInteger(policy?.parameters.get('q'));
    if (remaining === undefined || limit === undefined) continue;
    if (tightest && tightest.remaining <= remaining) continue;
    const windowSeconds = rateLimitInteger(policy?.parameters.get('w'));
    const resetSeconds = rateLimitInteger(state.parameters.get('t'));
    tightest = {
      policy: state.name,
      limit,
      remaining,
      ...(windowSeconds !== undefined ? { windowSeconds } : {}),
      ...(resetSeconds !== undefined ? { resetSeconds } : {}),
    };
  }
  return tightest;
}

/** What the run has seen of the two budgets; updated with every answer (calls.ts). */
export class Budget {
  primary?: Quota;
  failedAuth?: Quota;

  observe(exchange: Exchange, kind: 'primary' | 'failed-auth' | 'other'): void {
    if (kind === 'other') return;
    const quota = quotaOf(exchange);
    if (!quota) return;
    if (kind === 'primary') this.primary = quota;
    else this.failedAuth = quota;
  }
}

export const describeQuota = (quota: Quota) =>
  `${quota.limit} requests per ${quota.windowSeconds ?? '?'} s ("${quota.policy}"; ${quota.remaining} left, ` +
  `the window ends in ${quota.resetSeconds ?? '?'} s)`;

/**
 * Requests a run's generated cases cost, besides the cases themselves: each valid create is read back and
 * deleted at the end; a valid delete first creates its record and reads it back as gone; a write to an id the
 * account does not own is sent only after a show of it; the records the id-driven cases share are made and
 * deleted; an invalid create is followed by a search that it left nothing behind.
 */
export function casesCost(model: SpecModel, cases: Pick<Plan, 'valid' | 'invalid' | 'targets'>): number {
  const ids = (pick: (resource: Resource) => Operation | undefined) =>
    new Set(model.resources.map(pick).flatMap((operation) => (operation ? [operation.id] : [])));
  const creates = ids((resource) => resource.create);
  const deletes = ids((resource) => resource.remove);
  const reads = new Set(model.operations.filter((operation) => operation.method === 'GET').map((op) => op.id));
  let requests = 2 * Object.values(cases.targets).flat().length;
  for (const testCase of cases.valid) {
    requests += 1;
    if (creates.has(testCase.operation)) requests += 2;
    else if (testCase.target?.kind === 'unknown') requests += reads.has(testCase.operation) ? 0 : 1;
    else if (deletes.has(testCase.operation)) requests += 2;
  }
  for (const testCase of cases.invalid) requests += creates.has(testCase.operation) ? 2 : 1;
  return requests;
}

/** Evenly spread, in order: `share` of each operation's cases, at least one of each. */
function sample(cases: Case[], share: number): Case[] {
  const byOperation = new Map<string, Case[]>();
  for (const testCase of cases)
    byOperation.set(testCase.operation, [...(byOperation.get(testCase.operation) ?? []), testCase]);
  return [...byOperation.values()].flatMap((list) => {
    const keep = Math.max(1, Math.ceil(list.length * share));
    return Array.from({ length: keep }, (_, i) => list[Math.floor((i * list.length) / keep)] as Case);
  });
}

/**
 * The generated cases that fit in `available` requests: all of them, or the largest even share of each
 * operation's valid and invalid cases that fits (at least one of each operation's). Undefined when all fit.
 */
export function casesWithin(
  model: SpecModel,
  plan: Plan,
  available: number,
): { valid: Case[]; invalid: Case[]; share: number } | undefined {
  const cost = (share: number) => {
    const valid = sample(plan.valid, share);
    const invalid = sample(plan.invalid, share);
    return { valid, invalid, share, requests: casesCost(model, { valid, invalid, targets: plan.targets }) };
  };
  if (casesCost(model, plan) <= available) return undefined;
  let low = 0;
  let high = 1;
  for (let step = 0; step < 20; step++) {
    const middle = (low + high) / 2;
    if (cost(middle).requests <= available) low = middle;
    else high = middle;
  }
  return cost(low);
}
