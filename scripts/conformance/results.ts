// Every check's outcome, by subject (an operation id, or a path for path-wide checks) and check name. Failures
// with the same subject, check and message are kept once, with a count and the first request that showed them.
import type { Exchange } from './http.js';

export const CHECKS = [
  'no_server_error',
  'status_code_documented',
  'content_type_documented',
  'response_schema',
  'response_headers',
  'invalid_input_rejected',
  'not_acceptable',
  'body_too_large',
  'duplicate_conflict',
  'valid_input_accepted',
  'unknown_id_not_found',
  'auth_required',
  'method_not_allowed',
  'created_readable',
  'deleted_gone',
  'failed_create_leaves_nothing',
  'account_isolation',
  'odd_ids',
  'huge_integers',
  'control_characters',
  'absolute_form_target',
  'duplicate_credentials',
  'scope_enforced',
  'head_like_get',
  'long_path',
  'problem_accept',
  'duplicate_idempotency_key',
  'stateful_scenario',
  'list_walk',
  'rate_limit_headers',
  'rate_limited',
  'idempotent_replay',
  'idempotency_key_reuse',
  'not_modified',
  'precondition_failed',
  'webhook_signature',
  'webhook_payload',
  'webhook_same_id',
  'webhook_rotation',
] as const;

export type CheckName = (typeof CHECKS)[number];

/** Checks that need a server that keeps what it was sent. */
export const STATEFUL_CHECKS: CheckName[] = [
  'duplicate_conflict',
  'unknown_id_not_found',
  'created_readable',
  'deleted_gone',
  'failed_create_leaves_nothing',
  'account_isolation',
  'stateful_scenario',
  'list_walk',
  'idempotent_replay',
  'idempotency_key_reuse',
  'not_modified',
  'precondition_failed',
];

export interface Tally {
  pass: number;
  fail: number;
  skip: number;
}

export interface Failure {
  subject: string;
  check: CheckName;
  message: string;
  count: number;
  exchange?: Exchange;
  /** The particulars of the first occurrence (e.g. expected vs got values), which may differ between occurrences. */
  detail?: string;
}

export interface Skip {
  subject: string;
  check: CheckName;
  reason: string;
  count: number;
}

export class Results {
  readonly tallies = new Map<string, Map<CheckName, Tally>>();
  readonly failures = new Map<string, Failure>();
  readonly skips = new Map<string, Skip>();
  requests = 0;
  /**
   * Whether an answer is the deployment refusing the run's key for a scope it lacks (key-scopes.ts): the scopes,
   * else undefined. A check judged on such an answer is skipped, saying so, instead of passed or failed.
   */
  outOfReach: (exchange: Exchange) => string | undefined = () => undefined;

  constructor(private readonly only?: ReadonlySet<CheckName>) {}

  enabled(check: CheckName): boolean {
    return !this.only || this.only.has(check);
  }

  pass(subject: string, check: CheckName): void {
    if (this.enabled(check)) this.tally(subject, check).pass++;
  }

  /** `message` groups failures (keep record-specific values out of it); `detail` carries those values. */
  fail(subject: string, check: CheckName, message: string, exchange?: Exchange, detail?: string): void {
    if (!this.enabled(check)) return;
    const lacks = exchange && this.outOfReach(exchange);
    if (lacks) {
      this.skip(subject, check, `skipped: the key lacks ${lacks}`);
      return;
    }
    this.tally(subject, check).fail++;
    const key = `${subject}\u0000${check}\u0000${message}`;
    const known = this.failures.get(key);
    if (known) known.count++;
    else
      this.failures.set(key, {
        subject,
        check,
        message,
        count: 1,
        ...(exchange ? { exchange } : {}),
        ...(detail ? { detail } : {}),
      });
  }

  /** Records one pass or fail: `problem` undefined means it passed. */
  judge(subject: string, check: CheckName, problem: string | undefined, exchange?: Exchange, detail?: string): boolean {
    if (problem === undefined) this.pass(subject, check);
    else this.fail(subject, check, problem, exchange, detail);
    return problem === undefined;
  }

  skip(subject: string, check: CheckName, reason: string): void {
    if (!this.enabled(check)) return;
    this.tally(subject, check).skip++;
    const key = `${subject}\u0000${check}\u0000${reason}`;
    const known = this.skips.get(key);
    if (known) known.count++;
    else this.skips.set(key, { subject, check, reason, count: 1 });
  }

  totals(): Tally {
    const total = { pass: 0, fail: 0, skip: 0 };
    for (const checks of this.tallies.values()) {
      for (const tally of checks.values()) {
        total.pass += tally.pass;
        total.fail += tally.fail;
        total.skip += tally.skip;
      }
    }
    return total;
  }

  /** Totals of one check over every subject. */
  ofCheck(check: CheckName): Tally {
    const total = { pass: 0, fail: 0, skip: 0 };
    for (const checks of this.tallies.values()) {
      const tally = checks.get(check);
      if (tally) {
        total.pass += tally.pass;
        total.fail += tally.fail;
        total.skip += tally.skip;
      }
    }
    return total;
  }

  private tally(subject: string, check: CheckName): Tally {
    let checks = this.tallies.get(subject);
    if (!checks) {
      checks = new Map();
      this.tallies.set(subject, checks);
    }
    let tally = checks.get(check);
    if (!tally) {
      tally = { pass: 0, fail: 0, skip: 0 };
      checks.set(check, tally);
    }
    return tally;
  }
}
