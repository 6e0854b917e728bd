// runConformance(options): one whole run against a deployment, in-process, returning structured results and
// the text report. main.ts is the command line around it.
import { randomInt } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { buildModel, loadSpecText, type SpecModel } from '../../server/spec-model.js';
import { Budget, casesCost, casesWithin, describeQuota, type Quota } from './budget.js';
import { call, Interrupted } from './calls.js';
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
import { KeyScopes } from './key-scopes.js';
import { checkListWalks } from './list-walks.js';
import { preflight } from './preflight.js';
import { ODD_IDS, probeAuth, probeMethods, probeOddIds } from './probes.js';
import { judgeMissingFields, spendBudget } from './rate-limit.js';
import { RateLimitTracker } from './rate-limit-fields.js';
import { renderReport } from './report.js';
import { type CheckName, Results } from './results.js';
import { Rotation } from './rotation.js';
import { probeScopes } from './scopes.js';
import { checkIsolation, cleanUp, runScenarios, setUp } from './stateful.js';
import { runValidCases } from './valid-cases.js';
import { checkWebhooks, Receiver, receiverPlan, WEBHOOK_CHECKS } from './webhooks.js';

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
  /** Where the probe coverage across runs is kept (rotation.ts); none: the slices follow the seed. */
  stateFile?: string;
  /** Credential probes this run may send, instead of half the address's failed-authentication budget. */
  authProbes?: number;
  /** A receiver URL the deployment may call, forwarding to the runner's own receiver (webhooks.ts). */
  webhookUrl?: string;
  /** The port the runner's receiver listens on (default: --webhook-url's when local, else any). */
  webhookPort?: number;
  /** Aborted (SIGINT, SIGTERM): the checks stop, and what the run made is deleted before it returns. */
  signal?: AbortSignal;
  log?: (line: string) => void;
  onExchange?: (exchange: Exchange, operation: string | undefined) => void;
}

export interface ConformanceResult {
  seed: number;
  passed: boolean;
  results: Results;
  /** Why the stateful checks were skipped, when they were. */
  stateless?: string;
  /** Set when the run was interrupted (its clean-up still ran). */
  interrupted?: string;
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
  const model = modelOf(await loadSpecText(options.spec ?? DEFAULT_SPEC));
  return planRun(model, { seed: options.seed, cases: options.cases });
}

/**
 * The model of each spec text this process read, keyed by the text itself, so a spec that changed between two
 * runs is built anew. A process that runs the runner again and again (its own tests) builds a model once, and
 * compiles its schemas once (validator.ts keeps them by schema). Nothing changes a model once built.
 */
const models = new Map<string, SpecModel>();
/** Plans made from a model, by seed and number of cases; a run gets a copy of its own (planFor). */
const plans = new WeakMap<SpecModel, Map<string, Plan>>();
/** Few specs and seeds come back in one process: the oldest beyond these are dropped. */
const KEPT_MODELS = 4;
const KEPT_PLANS = 8;

function modelOf(text: string): SpecModel {
  const model = models.get(text) ?? buildModel(text);
  remember(models, text, model, KEPT_MODELS);
  return model;
}

/**
 * planRun's plan for this model, seed and number of cases, made once per process: a run changes its plan (the
 * webhook URLs aimed at its receiver, the cases sized to the quota), so each run gets a copy, shaped as a fresh
 * plan would be (an input shared by several cases stays shared, a record without prototype stays so).
 */
function planFor(model: SpecModel, seed: number, cases: number): Plan {
  const kept = plans.get(model) ?? new Map<string, Plan>();
  plans.set(model, kept);
  const key = `${seed} ${cases}`;
  const plan = kept.get(key) ?? planRun(model, { seed, cases });
  remember(kept, key, plan, KEPT_PLANS);
  return copyOf(plan, new Map());
}

/** Sets key to value as the newest entry, dropping the oldest beyond `limit`. */
function remember<K, V>(map: Map<K, V>, key: K, value: V, limit: number): void {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= limit) break;
    map.delete(oldest);
  }
}

/** A deep copy of plain data (objects, arrays, primitives) with the same sharing and prototypes. */
function copyOf<T>(value: T, copies: Map<object, unknown>): T {
  if (typeof value !== 'object' || value === null) return value;
  const known = copies.get(value);
  if (known !== undefined) return known as T;
  const copy: Record<string, unknown> = Array.isArray(value) ? [] : Object.create(Object.getPrototypeOf(value));
  copies.set(value, copy);
  for (const [key, item] of Object.entries(value)) {
    Object.defineProperty(copy, key, {
      value: copyOf(item, copies),
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy as T;
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceResult> {
  const started = Date.now();
  const seed = options.seed ?? randomSeed();
  const cases = options.cases ?? 50;
  const specLocation = options.spec ?? DEFAULT_SPEC;
  const log = options.log ?? (() => {});
  log(`seed ${seed}`);
  const model = modelOf(await loadSpecText(specLocation));
  const plan = planFor(model, seed, cases);
  const results = new Results(options.only ? new Set(options.only) : undefined);
  const secrets: Secret[] = [
    [options.apiKey, 'DSS_API_KEY'],
    ...(options.secondApiKey ? ([[options.secondApiKey, 'DSS_SECOND_API_KEY']] as Secret[]) : []),
    ...(options.readOnlyApiKey ? ([[options.readOnlyApiKey, 'DSS_READONLY_API_KEY']] as Secret[]) : []),
  ];
  // A narrow key: what it may not do is skipped, naming the scope, rather than failed (key-scopes.ts).
  const keyScopes = new KeyScopes();
  const primaryCredentials = [`Bearer ${options.apiKey}`, options.apiKey];
  results.outOfReach = (exchange) =>
    Object.values(exchange.request.headers).some((value) => primaryCredentials.includes(value))
      ? keyScopes.lacks(exchange)
      : undefined;
  const rotation = await Rotation.open(options.baseUrl.replace(/\/+$/, ''), options.stateFile, seed);
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
    webhooks: [],
    fixtures: new Map(),
    targets: new Map(),
    ...(options.onExchange ? { onExchange: options.onExchange } : {}),
    rotation,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.authProbes !== undefined ? { authProbes: options.authProbes } : {}),
    keyScopes,
    rateLimit: new RateLimitTracker(options.concurrency ?? 4),
    budget: new Budget(),
    log,
  };

  // Throws PreflightError, before anything is created, when the target cannot be tested as given.
  await preflight(ctx);
  announceBudget(ctx, options.cases !== undefined);
  let leftBehind = 0;
  let interrupted: string | undefined;
  // The webhook receiver: the runner's own, where the deployment can reach it (webhooks.ts).
  const wantsWebhooks = WEBHOOK_CHECKS.some((check) => results.enabled(check));
  const listen = wantsWebhooks ? receiverPlan(ctx, options.webhookUrl, options.webhookPort) : 'not selected';
  const receiver = typeof listen === 'string' ? listen : await Receiver.start(listen.port);
  const receiverUrl = typeof listen === 'string' ? undefined : listen.url;
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
    shareQuota(ctx);
    // Early, before the other checks use up an account's endpoint limit.
    await phase('webhooks', WEBHOOK_CHECKS, () => checkWebhooks(ctx, receiver, receiverUrl));
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
    await phase('list walks', ['list_walk'], () => checkListWalks(ctx, () => requestsLeft(ctx)));
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
  } catch (error) {
    // Ctrl-C, or a check that broke: what the run made is deleted all the same (finally), then it says so.
    if (!(error instanceof Interrupted)) {
      ctx.cleaning = true;
      leftBehind = await cleanUp(ctx);
      throw error;
    }
    interrupted = `interrupted (${String(options.signal?.reason ?? 'aborted')}): the checks after that point did not run`;
    log(interrupted);
  } finally {
    if (!ctx.cleaning) {
      ctx.cleaning = true;
      leftBehind = await cleanUp(ctx);
    }
    if (typeof receiver !== 'string') await receiver.close();
  }
  judgeMissingFields(ctx);
  // Last: it leaves the key without quota for the rest of the window.
  if (interrupted) {
    // Nothing more is sent.
  } else if (options.rateLimitBudget === undefined) {
    results.skip('(rate limit)', 'rate_limited', "opt in with --rate-limit-budget <n>: it spends the key's quota");
  } else {
    const budget = options.rateLimitBudget;
    await spendBudget(ctx, budget, (operation) => call(ctx, operation, { noRateLimitRetry: true }));
  }

  const stateProblem = await rotation.save();
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
      ...(interrupted ? { interrupted } : {}),
      ...(ctx.sized
        ? {
            sized: `generated cases sized to the key's quota (${ctx.sized.quota.limit} per ${ctx.sized.quota.windowSeconds ?? '?'} s): ${ctx.sized.valid} valid and ${ctx.sized.invalid} invalid ran; a larger quota runs them all`,
          }
        : {}),
      ...(keyScopes.lacking.size > 0
        ? {
            narrow:
              `the key lacks ${[...keyScopes.lacking].sort().join(', ')} (the deployment's 403s say so): ` +
              'what needs them is skipped, not failed',
          }
        : {}),
      durationMs,
      leftBehind,
      sections: [
        {
          title: 'RECORDS (what the run made in the accounts, and deleted before it ended)',
          lines: ledgerLines(ctx, leftBehind),
        },
        { title: 'WEBHOOKS (deliveries to a receiver, judged end to end)', lines: ctx.webhooks },
        {
          title: 'COVERAGE (probes sent in slices, one run after another)',
          lines: [...ctx.rotation.coverage(), ...(stateProblem ? [stateProblem] : [])],
        },
      ],
      subjects: [...model.operations.map((op) => op.id), ...model.paths.keys(), ...model.resources.map((r) => r.name)],
    },
    secrets,
  );
  return {
    seed,
    passed: results.totals().fail === 0 && !interrupted,
    ...(interrupted ? { interrupted } : {}),
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

function ledgerLines(ctx: Context, leftBehind: number): string[] {
  const lines = [...ctx.ledger].map(
    ([resource, { created, left }]) =>
      `${resource}: ${created} created, ${created - left} deleted${left ? `, ${left} LEFT BEHIND` : ''}`,
  );
  if (lines.length === 0) return ['nothing created'];
  lines.push(
    leftBehind
      ? `${leftBehind} could not be deleted (listed above as failures of the clean-up)`
      : 'every record the run made is deleted: the accounts hold what they held before the run',
  );
  return lines;
}

/** Requests of the primary key spent since the run took its share of the quota (0 if the window turned since). */
function spentOfShare(ctx: Context): number {
  const quota = ctx.budget.primary;
  if (!quota || !ctx.share) return 0;
  return Math.max(0, ctx.share.remainingAtStart - quota.remaining);
}

/**
 * A run spends at most half of the key's quota per window, so that a second run right after it (or the
 * operator's own traffic) is not refused: the probe families are sent in slices that fit, the rest left to
 * the runs after this one (rotation.ts), and the generated cases get what is left (fitCasesToBudget).
 */
function shareQuota(ctx: Context): void {
  const quota = ctx.budget.primary;
  if (!quota) return;
  const requests = Math.max(0, Math.min(Math.floor(quota.limit / 2), quota.remaining - reserve(ctx, 0)));
  ctx.share = { requests, remainingAtStart: quota.remaining };
  const scalable = probeCost(ctx);
  // What every run sends whatever the quota: the checks of one record per resource, the clean-up, and a
  // quarter of the share for the generated cases.
  const fixed = 60 + 25 * ctx.model.resources.length + ctx.created.length;
  const fraction = Math.min(1, Math.max(0, (requests - fixed - Math.ceil(requests / 4)) / Math.max(1, scalable)));
  ctx.log(
    `this run's share of the key's quota: ${requests} requests (half of ${quota.limit} per ${quota.windowSeconds ?? '?'} s, ` +
      `so that the next run fits in the same window)${fraction < 1 ? `; ${Math.round(fraction * 100)}% of each probe family fits in it, the runs after this one send the rest in turn` : ''}`,
  );
  if (fraction >= 1) return;
  ctx.rotation.fraction = fraction;
  ctx.rotation.leftReason =
    `left for a later run: this run's share of the key's quota (${requests} of ${quota.limit} per ` +
    `${quota.windowSeconds ?? '?'} s) takes ${Math.round(fraction * 100)}% of these probes; runs one after another ` +
    'send the others in turn (coverage below)';
}

/** Requests the probe families that are sent in slices cost when sent whole. */
function probeCost(ctx: Context): number {
  const { operations, paths, resources } = ctx.model;
  const reads = operations.filter((op) => op.method === 'GET').length;
  const undocumented = [...paths.values()].reduce(
    (sum, methods) => sum + ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !methods.includes(m)).length,
    0,
  );
  return (
    operations.filter((op) => op.pathParams.length === 1).length * ODD_IDS.length +
    undocumented +
    4 * reads +
    2 * operations.filter((op) => op.security[0]?.kind === 'bearer').length +
    operations.length +
    9 * new Set(resources.map((r) => r.collectionPath)).size +
    4 * ctx.plan.duplicates.length +
    2 * 9 * resources.length
  );
}

/** Before any check: what the key's quota allows, and what the run will do about it. */
function announceBudget(ctx: Context, casesGiven: boolean): void {
  const quota = ctx.budget.primary;
  if (!quota) return;
  const cases = casesCost(ctx.model, ctx.plan);
  ctx.log(`quota of the key: ${describeQuota(quota)}`);
  ctx.log(
    casesGiven
      ? `the generated cases need about ${cases} requests, besides a few hundred for the other checks; they are sized down if they do not fit in this run's share`
      : `the generated cases (about ${cases} requests) will be sized to what is left of it after the other checks; --cases <n> sets their number, within the same share`,
  );
}

/** What is left of this run's share of the key's quota (or of the window, when it took no share). */
const leftOfShare = (ctx: Context, quota: Quota) =>
  ctx.share ? Math.min(quota.remaining, ctx.share.requests - spentOfShare(ctx)) : quota.remaining;

/** Requests the run may still spend on checks, less what the clean-up needs; undefined without a quota. */
function requestsLeft(ctx: Context): number | undefined {
  const quota = ctx.budget.primary;
  if (!quota) return undefined;
  const left = leftOfShare(ctx, quota);
  return left - ctx.created.length - reserve(ctx, left);
}

/**
 * Once the other checks ran: the generated cases get what is left of this run's share of the key's quota (less
 * what the clean-up needs), --cases or not: a run never spends more than the share it announced, so --cases <n>
 * is sized down when its cases do not fit, and the run says so.
 */
function fitCasesToBudget(ctx: Context, casesGiven: boolean): void {
  const quota = ctx.budget.primary;
  // A mock counts no requests: its RateLimit fields are the spec's examples, no quota to size the cases to.
  if (!quota || ctx.profile === 'mock') return;
  const left = leftOfShare(ctx, quota);
  const available = requestsLeft(ctx) ?? left;
  const needed = casesCost(ctx.model, ctx.plan);
  if (needed <= available) return;
  const fitted = casesWithin(ctx.model, ctx.plan, Math.max(available, 0));
  if (!fitted) return;
  ctx.log(
    `${casesGiven ? `--cases asked for about ${needed} requests of generated cases, more than this run's share has left: ` : ''}` +
      `sized to the quota: ${fitted.valid.length} of ${ctx.plan.valid.length} valid and ${fitted.invalid.length} of ` +
      `${ctx.plan.invalid.length} invalid cases (${Math.max(left, 0)} requests left of this run's share; the key has ` +
      `${quota.remaining} of ${quota.limit} per ${quota.windowSeconds ?? '?'} s); a larger quota, or runs one after ` +
      'another, run more',
  );
  ctx.plan.valid = fitted.valid;
  ctx.plan.invalid = fitted.invalid;
  ctx.sized = { valid: fitted.valid.length, invalid: fitted.invalid.length, quota };
}
