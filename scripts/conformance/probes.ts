// Probes that need no generated data: credentials (401), undocumented methods (405 with Allow) and odd path
// ids (4xx, never 5xx), on every operation or path of the spec.

import type { Operation } from '../../server/spec-model.js';
import { call, credentialOf } from './calls.js';
import type { Context } from './context.js';
import { send } from './http.js';
import type { Input } from './inputs.js';
import { pool } from './pool.js';
import { limitation } from './profiles.js';
import { is4xx } from './replies.js';
import { checkNoServerError, checkResponse, documentedResponse } from './response-checks.js';
import { slice } from './rotation.js';

export const ODD_IDS = [
  '0',
  '-1',
  '1.5',
  '1e3',
  'abc',
  '1?x=1',
  '1/',
  '%00',
  '99999999999999999999',
  '9007199254740992',
  '9'.repeat(400),
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** A valid input for an operation (so that only the thing probed is wrong), and a real id when there is one. */
export function validRequestOf(ctx: Context, operation: Operation): { input?: Input; ids: Record<string, string> } {
  const input = ctx.plan.spare[operation.id]?.[0];
  const resource = ctx.model.resources.find((r) => r.itemPath === operation.path);
  const fixture = resource && ctx.fixtures.get(resource.name);
  const ids = resource && fixture ? { [resource.idParam]: fixture.id } : {};
  return { ...(input ? { input } : {}), ids };
}

/** A key of the same shape as `key` (letters stay letters, digits digits), so only its value is wrong. */
function lookalike(key: string, seed: number): string {
  let state = seed >>> 0 || 1;
  const next = (n: number) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
  return key
    .replace(/[a-z]/g, () => String.fromCharCode(97 + next(26)))
    .replace(/[A-Z]/g, () => String.fromCharCode(65 + next(26)))
    .replace(/[0-9]/g, () => String(next(10)));
}

/** Failed authentications a run leaves to the others on its address (a person, a deployment's own checks). */
const FAILED_AUTH_RESERVE = 2;

/**
 * How many credential probes this run may send: at most half of the address's failed-authentication budget
 * (so that a second run right after this one still has its half) and never its last few. Undefined when the
 * target states no such budget (nothing to keep within).
 */
export function failedAuthAllowance(budget: { limit: number; remaining: number } | undefined): number | undefined {
  if (!budget) return undefined;
  return Math.max(0, Math.min(Math.ceil(budget.limit / 2), budget.remaining - FAILED_AUTH_RESERVE));
}

/**
 * The probes in the order they are sent while the allowance lasts: one of each variant first (each on another
 * operation, so that every kind of bad credential is tried), then variant by variant across the operations, so
 * that every operation is probed once before any is probed twice.
 */
export function probeOrder<P extends { operation: { id: string }; variant: string; rank: number }>(probes: P[]): P[] {
  const byRank = [...probes].sort((a, b) => a.rank - b.rank);
  const first: P[] = [];
  const used = new Set<string>();
  for (const variant of new Set(byRank.map((probe) => probe.variant))) {
    const pick = byRank.find((probe) => probe.variant === variant && !used.has(probe.operation.id));
    if (!pick) continue;
    first.push(pick);
    used.add(pick.operation.id);
  }
  return [...first, ...byRank.filter((probe) => !first.includes(probe))];
}

/**
 * Where the address stands with the failed-authentication budget, read without spending any of it: a request
 * to no operation's path, before any key is looked at (the service answers it 404 with the address's RateLimit
 * fields and gives the request back).
 */
async function readFailedAuthBudget(ctx: Context): Promise<void> {
  const exchange = await send({ method: 'GET', url: `${ctx.baseUrl}/conformance-no-such-path`, headers: {} });
  ctx.results.requests++;
  if (exchange.reply.status !== 401 && exchange.reply.status !== 429) ctx.budget.observe(exchange, 'failed-auth');
}

export async function probeAuth(ctx: Context): Promise<void> {
  const { results } = ctx;
  const wrongKey = lookalike(ctx.primary.key, ctx.plan.seed);
  const probes: Array<{ operation: Operation; variant: string; credential: string | null; rank: number }> = [];
  for (const operation of ctx.model.operations) {
    if (operation.security.length === 0) continue;
    const unsupported = operation.security.find((s) => s.kind === 'unsupported');
    if (unsupported?.kind === 'unsupported') {
      results.skip(operation.id, 'auth_required', unsupported.why);
      continue;
    }
    const bearer = operation.security[0]?.kind === 'bearer';
    // In the order they are sent when the budget cannot take them all: the commonest mistakes first.
    const variants: Array<[string, string | null]> = [
      ['missing', null],
      ['wrong_key', credentialOf(operation, { key: wrongKey, variable: 'WRONG_KEY' })],
      ['malformed', bearer ? 'Bearer' : ''],
      ...(bearer
        ? [['other_scheme', `Basic ${Buffer.from('user:password').toString('base64')}`] as [string, string]]
        : []),
    ];
    variants.forEach(([variant, credential], rank) => {
      probes.push({ operation, variant, credential, rank });
    });
  }
  if (probes.length === 0) return;
  await readFailedAuthBudget(ctx);
  const budget = ctx.budget.failedAuth;
  const allowance = failedAuthAllowance(budget);
  if (budget && allowance !== undefined) {
    ctx.log(
      `failed authentications: this address may have ${budget.limit} per ${budget.windowSeconds ?? '?'} s ` +
        `(${budget.remaining} left); the ${probes.length} credential probes spend at most ${allowance}`,
    );
  }
  // The operator may raise this run's share (--auth-probes), e.g. for a deployment whose budget was raised.
  const share = ctx.authProbes ?? allowance;
  const usable = probeOrder(probes).filter(({ variant, operation }) => {
    const skipped = limitation(ctx, 'auth_required', variant);
    if (skipped) results.skip(operation.id, 'auth_required', skipped);
    return !skipped;
  });
  // Each run sends the next slice, so that runs one after another probe every operation's 401.
  const rotation = ctx.rotation.pick(
    'auth_required',
    usable,
    (probe) => `${probe.operation.id} ${probe.variant}`,
    share ?? usable.length,
  );
  for (const { operation, variant } of rotation.left) {
    results.skip(
      operation.id,
      'auth_required',
      `${variant} credentials not sent this run: this address may fail authentication ${budget?.limit ?? '?'} times per ` +
        `${budget?.windowSeconds ?? '?'} s (its "${budget?.policy ?? 'failed-auth'}" policy), and a run spends at most half of ` +
        'that, so that the next run (or anyone else on this address) is not refused; the runs after this one ' +
        'send the others in turn (coverage below), or --auth-probes <n> sends more',
    );
  }
  await pool(rotation.picked, ctx.concurrency, async (probe) => {
    const { operation, variant, credential } = probe;
    const challenge = documentedResponse(operation, 401)?.headers;
    const challengeName = Object.keys(challenge ?? {}).find((name) => name.toLowerCase() === 'www-authenticate');
    const { input, ids } = validRequestOf(ctx, operation);
    const exchange = await call(ctx, operation, { ids, credential, ...(input ? { input } : {}) });
    const { status, headers } = exchange.reply;
    // The address's failed-authentication budget, spent by someone else: no answer on the credentials, and
    // nothing to wait for (a run never waits out that budget).
    if (status === 429) {
      results.skip(
        operation.id,
        'auth_required',
        `${variant} credentials answered 429: the address's failed-authentication budget is used up ` +
          `(retry in ${headers['retry-after'] ?? '?'} s)`,
      );
      return;
    }
    rotation.sent(probe);
    checkResponse(results, operation, exchange);
    const problem =
      status !== 401
        ? `${variant} credentials answered ${status}, not 401`
        : challengeName && challenge?.[challengeName]?.required && !headers['www-authenticate']
          ? `${variant} credentials: 401 without the documented WWW-Authenticate header`
          : undefined;
    results.judge(operation.id, 'auth_required', problem, exchange);
  });
}

export async function probeMethods(ctx: Context): Promise<void> {
  const { results } = ctx;
  const all = [...ctx.model.paths].flatMap(([path, documented]) =>
    METHODS.filter((m) => !documented.includes(m)).map((method) => ({ path, documented, method })),
  );
  const jobs = slice(
    ctx,
    'method_not_allowed',
    all,
    (job) => `${job.method} ${job.path}`,
    (job) => job.path,
  );
  for (const { path, documented, method } of jobs) {
    const operation = ctx.model.operations.find((op) => op.path === path);
    if (!operation) continue;
    const skipped = limitation(ctx, 'method_not_allowed');
    if (skipped) {
      results.skip(path, 'method_not_allowed', skipped);
      continue;
    }
    const { ids } = validRequestOf(ctx, operation);
    const exchange = await call(ctx, operation, { ids, method });
    const allow = exchange.reply.headers.allow;
    const listed = new Set(
      (allow ?? '')
        .split(',')
        .map((m) => m.trim().toUpperCase())
        .filter(Boolean),
    );
    // HEAD is implied wherever GET is (RFC 9110 §9.3.2): listing it is right, leaving it out tolerated.
    const implied = documented.includes('GET') && !documented.includes('HEAD') && listed.has('HEAD') ? 1 : 0;
    const exact = listed.size === documented.length + implied && documented.every((m) => listed.has(m));
    const problem =
      exchange.reply.status !== 405
        ? `${method} answered ${exchange.reply.status}, not 405`
        : allow === undefined
          ? `${method}: 405 without an Allow header (documented: ${documented.join(', ')})`
          : !exact
            ? `${method}: Allow is "${allow}", documented: ${documented.join(', ')}`
            : undefined;
    results.judge(path, 'method_not_allowed', problem, exchange);
  }
}

export async function probeOddIds(ctx: Context): Promise<void> {
  const { results } = ctx;
  const withIds = ctx.model.operations.filter((op) => op.pathParams.length === 1);
  const all = withIds.flatMap((operation) => ODD_IDS.map((id) => ({ operation, id })));
  const jobs = slice(
    ctx,
    'odd_ids',
    all,
    (job) => `${job.operation.id} ${job.id}`,
    (job) => job.operation.id,
  );
  await pool(jobs, ctx.concurrency, async ({ operation, id }) => {
    const skipped = limitation(ctx, 'odd_ids', id);
    if (skipped) {
      results.skip(operation.id, 'odd_ids', skipped);
      return;
    }
    const { input } = validRequestOf(ctx, operation);
    const exchange = await call(ctx, operation, { rawId: id, ...(input ? { input } : {}) });
    const { status } = exchange.reply;
    // "1/" is another path, where the operation's documented answers do not apply; no answer at all is no pass.
    // So is an id with "?" or "/" inside a path that goes on after it (`/domains/1?x=1/verify` is /domains/1).
    const elsewhere = id.endsWith('/') || (/[?/]/.test(id) && !/\{[^}]+\}$/.test(operation.path));
    if (!elsewhere) checkResponse(results, operation, exchange);
    else checkNoServerError(results, operation.id, exchange);
    results.judge(
      operation.id,
      'odd_ids',
      is4xx(status) ? undefined : `id "${id}" answered ${status}, not 4xx`,
      exchange,
    );
  });
}
