// runConformance(options): one whole run against a deployment, in-process, returning structured results and
// the text report. main.ts is the command line around it.
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { buildModel, loadSpecText, type SpecModel } from '../../server/spec-model.js';
import { Budget, casesCost, casesWithin, describeQuota } from './budget.js';
import { call } from './calls.js';
import { type Plan, planRun } from './cases.js';
import { checkConditionalRequests } from './conditional.js';
import type { Context, Profile } from './context.js';
import { checkDuplicates } from './duplicates.js';
import {
  probeAbsoluteForm,
  probeControlCharacters,
  probeDuplicateCredentials,
  probeHead,
  probeHugeIntegers,
} from './edge-probes.js';
import { probeDuplicateIdempotencyKeys, probeLongPaths, probeProblemAccept } from './generic-probes.js';
import type { Exchange, Secret } from './http.js';
import { checkIdempotency } from './idempotency.js';
import { runInvalidCases } from './invalid-cases.js';
import { preflight } from './preflight.js';
import { probeAuth, probeMethods, probeOddIds } from './probes.js';
import { judgeMissingFields, spendBudget } from './rate-limit.js';
import { RateLimitTracker } from './rate-limit-fields.js';
import { renderReport } from './report.js';
import { type CheckName, Results } from './results.js';
import { probeScopes } from './scopes.js';
import { checkIsolation, cleanUp, runScenarios, setUp } from './stateful.js';
import { runValidCases } from './valid-cases.js';

const GENERIC: CheckName[] = [
  'no_server_error',
  'status_code_documented',
  'content_type_documented',
  'response_schema',
  'response_headers',
  'rate_limit_headers',
];

export const DEFAULT_SPEC = fileURLToPath(new URL('../../generated/openapi.yaml', import.meta.url));

export interface ConformanceOptions {
  /** Where the spec's paths are mounted, e.g. http://127.0.0.1:3000/api/v1 (no trailing slash needed). */
  baseUrl: string;
  apiKey: string;
  secondApiKey?: string;
  /** A key of the same account with only read scopes: writes must be refused with 403 naming their scope. */
  readOnlyApiKey?: string;
  /** Default: a random one, printed. */
  seed?: number;
  /** Generated valid and invalid cases per operation (default 50). */
  cases?: number;
  /** A file path or an http(s) URL; default generated/openapi.yaml. */
  spec?: string;
  only?: CheckName[];
  profile?: Profile;
  concurrency?: number;
  /** Spend up to this many requests of the primary key's quota, after everything else, until a 429. */
  rateLimitBudget?: number;
  log?: (line: string) => void;
  onExchange?: (exchange: Exchange, operation: string | undefined) => void;
}

export interface ConformanceResult {
  seed: number;
  passed: boolean;
  results: Results;
  /** Why the stateful checks were skipped, when they were. */
  stateless?: string;
  report: string;
  durationMs: number;
  leftBehind: number;
  secrets: Secret[];
}

export function randomSeed(): number {
  return randomInt(1, 2 ** 31 - 1);
}

/** The requests a run would generate, without sending any: the same seed gives the same plan. */
export async function dryPlan(options: { seed: number; cases: number; spec?: string }): Promise<Plan> {
  const model = buildModel(await loadSpecText(options.spec ?? DEFAULT_SPEC));
  return planRun(model, { seed: options.seed, cases: options.cases });
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceResult> {
  const started = Date.now();
  const seed = options.seed ?? randomSeed();
  const cases = options.cases ?? 50;
  const specLocation = options.spec ?? DEFAULT_SPEC;
  const log = options.log ?? (() => {});
  log(`seed ${seed}`);
  const model: SpecModel = buildModel(await loadSpecText(specLocation));
  const plan = planRun(model, { seed, cases });
  const results = new Results(options.only ? new Set(options.only) : undefined);
  const secrets: Secret[] = [
    [options.apiKey, 'DSS_API_KEY'],
    ...(options.secondApiKey ? ([[options.secondApiKey, 'DSS_SECOND_API_KEY']] as Secret[]) : []),
    ...(options.readOnlyApiKey ? ([[options.readOnlyApiKey, 'DSS_READONLY_API_KEY']] as Secret[]) : []),
  ];
  const ctx: Context = {
    model,
    plan,
    results,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    primary: { key: options.apiKey, variable: 'DSS_API_KEY' },
    ...(options.secondApiKey ? { second: { key: options.secondApiKey, variable: 'DSS_SECOND_API_KEY' } } : {}),
    ...(options.readOnlyApiKey ? { readOnly: { key: options.readOnlyApiKey, variable: 'DSS_READONLY_API_KEY' } } : {}),
    secrets,
    profile: options.profile ?? 'auto',
    concurrency: options.concurrency ?? 4,
    created: [],
    ledger: new Map(),
    limits: new Map(),
    refusedCreates: new Map(),
    fixtures: new Map(),
    targets: new Map(),
    ...(options.onExchange ? { onExchange: options.onExchange } : {}),
    rateLimit: new RateLimitTracker(options.concurrency ?? 4),
    budget: new Budget(),
    log,
  };

  // Throws PreflightError, before anything is created, when the target cannot be tested as given.
  await preflight(ctx);
  announceBudget(ctx, options.cases !== undefined);
  let leftBehind = 0;
  try {
    // A phase runs when one of its own checks is selected; the checks on every response (GENERIC) are
    // recorded in whichever phases run, and select every phase when they are all that was asked for.
    const onlyGeneric = !!options.only && options.only.every((check) => GENERIC.includes(check));
    const phase = async (name: string, checks: CheckName[], work: () => Promise<void>) => {
      if (!onlyGeneric && !checks.some((check) => results.enabled(check))) return;
      const at = Date.now();
      await work();
      log(`${name}: ${Date.now() - at} ms, ${results.requests} requests so far`);
    };
    await setUp(ctx);
    if (ctx.stateless) log(`stateful checks will be skipped: ${ctx.stateless}`);
    // A target that keeps no state is a mock: hold it to what a mock can honour, and report the rest as
    // skipped with the reason (`--profile server` holds it to every check instead).
    if (ctx.stateless && ctx.profile === 'auto') {
      ctx.profile = 'mock';
      log('a stateless target is a mock: the mock profile applies (--profile server to hold it to every check)');
    }
    await phase('credentials', ['auth_required'], () => probeAuth(ctx));
    await phase('methods', ['method_not_allowed'], () => probeMethods(ctx));
    await phase('odd ids', ['odd_ids'], () => probeOddIds(ctx));
    await phase('huge integers', ['huge_integers'], () => probeHugeIntegers(ctx));
    await phase('control characters', ['control_characters'], () => probeControlCharacters(ctx));
    await phase('absolute-form target', ['absolute_form_target'], () => probeAbsoluteForm(ctx));
    await phase('duplicate credentials', ['duplicate_credentials'], () => probeDuplicateCredentials(ctx));
    await phase('scopes', ['scope_enforced'], () => probeScopes(ctx));
    await phase('HEAD', ['head_like_get'], () => probeHead(ctx));
    await phase('long paths', ['long_path'], () => probeLongPaths(ctx));
    await phase('Accept: application/problem+json', ['problem_accept'], () => probeProblemAccept(ctx));
    await phase('two Idempotency-Keys', ['duplicate_idempotency_key'], () => probeDuplicateIdempotencyKeys(ctx));
    await phase('duplicates', ['duplicate_conflict'], () => checkDuplicates(ctx));
    await phase('scenarios', ['stateful_scenario'], () => runScenarios(ctx));
    await phase('idempotency', ['idempotent_replay', 'idempotency_key_reuse'], () => checkIdempotency(ctx));
    await phase('conditional requests', ['not_modified', 'precondition_failed'], () => checkConditionalRequests(ctx));
    await phase('isolation', ['account_isolation'], () => checkIsolation(ctx));
    // Last, because their number is the one that can give: sized to what is left of the key's quota.
    fitCasesToBudget(ctx, options.cases !== undefined);
    await phase(
      'valid cases',
      ['valid_input_accepted', 'unknown_id_not_found', 'created_readable', 'deleted_gone'],
      () => runValidCases(ctx),
    );
    await phase(
      'invalid cases',
      ['invalid_input_rejected', 'not_acceptable', 'body_too_large', 'failed_create_leaves_nothing'],
      () => runInvalidCases(ctx),
    );
  } finally {
    leftBehind = await cleanUp(ctx);
  }
  judgeMissingFields(ctx);
  // Last: it leaves the key without quota for the rest of the window.
  if (options.rateLimitBudget === undefined) {
    results.skip('(rate limit)', 'rate_limited', "opt in with --rate-limit-budget <n>: it spends the key's quota");
  } else {
    const budget = options.rateLimitBudget;
    await spendBudget(ctx, budget, (operation) => call(ctx, operation, { noRateLimitRetry: true }));
  }

  const durationMs = Date.now() - started;
  const report = renderReport(
    results,
    {
      baseUrl: ctx.baseUrl,
      spec: specLocation,
      seed,
      cases,
      profile: ctx.profile,
      ...(ctx.stateless ? { stateless: ctx.stateless } : {}),
      ...(ctx.sized
        ? {
            sized: `generated cases sized to the key's quota (${ctx.sized.quota.limit} per ${ctx.sized.quota.windowSeconds ?? '?'} s): ${ctx.sized.valid} valid and ${ctx.sized.invalid} invalid ran; a larger quota runs them all`,
          }
        : {}),
      durationMs,
      leftBehind,
      subjects: [...model.operations.map((op) => op.id), ...model.paths.keys(), ...model.resources.map((r) => r.name)],
    },
    secrets,
  );
  return {
    seed,
    passed: results.totals().fail === 0,
    results,
    ...(ctx.stateless ? { stateless: ctx.stateless } : {}),
    report,
    durationMs,
    leftBehind,
    secrets,
  };
}

/** Requests kept back from the budget: the answers in flight when it was read, and a margin for the estimate. */
const reserve = (ctx: Context, remaining: number) => 2 * ctx.concurrency + 10 + Math.ceil(remaining / 10);

/** Before any check: what the key's quota allows, and what the run will do about it. */
function announceBudget(ctx: Context, casesGiven: boolean): void {
  const quota = ctx.budget.primary;
  if (!quota) return;
  const cases = casesCost(ctx.model, ctx.plan);
  ctx.log(`quota of the key: ${describeQuota(quota)}`);
  ctx.log(
    casesGiven
      ? `the generated cases need about ${cases} requests, besides a few hundred for the other checks`
      : `the generated cases (about ${cases} requests) will be sized to what is left of it after the other checks; --cases <n> fixes their number`,
  );
}

/**
 * Once the other checks ran: the generated cases get what is left of the key's quota (less what the cleanup
 * needs), unless --cases was given. Then the run says how long the waits for the quota will take instead.
 */
function fitCasesToBudget(ctx: Context, casesGiven: boolean): void {
  const quota = ctx.budget.primary;
  if (!quota) return;
  const available = quota.remaining - ctx.created.length - reserve(ctx, quota.remaining);
  const needed = casesCost(ctx.model, ctx.plan);
  if (needed <= available) return;
  if (casesGiven) {
    const windows = Math.ceil((needed - Math.max(available, 0)) / quota.limit);
    const seconds = (quota.resetSeconds ?? 0) + (windows - 1) * (quota.windowSeconds ?? 0);
    ctx.log(
      `the generated cases need about ${needed} requests and the key has ${Math.max(available, 0)} left in this ` +
        `window: the run waits for the quota about ${windows} time(s), some ${seconds} s (leave out --cases to size ` +
        'them to the quota, or give the key a larger one)',
    );
    return;
  }
  const fitted = casesWithin(ctx.model, ctx.plan, Math.max(available, 0));
  if (!fitted) return;
  ctx.log(
    `sized to the quota: ${fitted.valid.length} of ${ctx.plan.valid.length} valid and ${fitted.invalid.length} of ` +
      `${ctx.plan.invalid.length} invalid cases (${quota.remaining} requests left of ${quota.limit} per ` +
      `${quota.windowSeconds ?? '?'} s); a larger quota, or --cases <n> with waits for it, runs more`,
  );
  ctx.plan.valid = fitted.valid;
  ctx.plan.invalid = fitted.invalid;
  ctx.sized = { valid: fitted.valid.length, invalid: fitted.invalid.length, quota };
}
