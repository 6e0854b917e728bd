// What the domains module needs to check records: the DNS lookup, the schedule, the per-domain verify limit, and
// whether this is the sandbox (whose test zone verifies at once). Built once from the configuration.
import type { Database, PruneBatch } from '../db/database.js';
import { lockedForUpdate } from '../db/database.js';
import type { Quota } from '../quota.js';
import {
  type CheckSchedule,
  challengeName,
  countVerify,
  DEFAULT_SCHEDULE,
  inTestZone,
  type LookupResult,
  type Observation,
  TEST_ZONE,
} from './check-rules.js';
import { EMPTY_OBSERVED, observeRouting, type RoutingLookupResult, type RoutingObservation } from './routing-rules.js';
import { domainKind, NO_TARGETS, type RoutingTargets, routingWay } from './routing-targets.js';
import { DEFAULT_TXT_LOOKUP, txtLookup } from './txt-lookup.js';

export interface DomainChecks {
  schedule: CheckSchedule;
  lookup(name: string): Promise<LookupResult>;
  /** Verifies per domain and window; undefined: no limit. */
  verifyQuota: Quota | undefined;
  /** In the sandbox, names of the test zone verify at once, without DNS. */
  sandbox: boolean;
  /** Where custom domains' traffic must go; without it, routing is not checked (`no_target`). */
  routing?: DomainRouting;
}

/** The operator's routing targets and the lookup of a name's CNAME, A and AAAA records. */
export interface DomainRouting {
  targets: RoutingTargets;
  lookup(name: string): Promise<RoutingLookupResult>;
}

/** The routing targets of these checks (none when routing is not configured). */
export const targetsOf = (checks: DomainChecks): RoutingTargets => checks.routing?.targets ?? NO_TARGETS;

export const DEFAULT_VERIFY_QUOTA: Quota = { limit: 10, windowSeconds: 60 };

/** Checks through the system's resolvers on the default schedule: what an app gets unless told otherwise. */
export function defaultDomainChecks(): DomainChecks {
  const lookup = txtLookup(DEFAULT_TXT_LOOKUP);
  return { schedule: DEFAULT_SCHEDULE, lookup, verifyQuota: DEFAULT_VERIFY_QUOTA, sandbox: false };
}

/** The sandbox's observation for a name of its test zone. */
const TEST_ZONE_FOUND: Observation = {
  code: 'test_zone',
  message: `A name under ${TEST_ZONE}, the sandbox's test zone: verified at once, without DNS.`,
  values: [],
};

/** The observation for a name of the test zone outside the sandbox: it can never be proven here. */
const TEST_ZONE_ELSEWHERE: Observation = {
  code: 'missing',
  message: `A name under ${TEST_ZONE}, the sandbox's test zone: such names verify only in the sandbox (npm run sandbox), never here. Store a name whose DNS you control.`,
  values: [],
};

/**
 * What a check of the name sees, for a verify and a scheduled check alike: a name of the test zone is never
 * looked up (verified at once in the sandbox, `missing` elsewhere, so that it stays pending and expires like
 * any claim never proven); any other name's challenge record is looked up.
 */
export function lookUp(checks: DomainChecks, name: string): Promise<LookupResult | Observation> {
  if (inTestZone(name)) return Promise.resolve(checks.sandbox ? TEST_ZONE_FOUND : TEST_ZONE_ELSEWHERE);
  return checks.lookup(challengeName(name));
}

/**
 * What a check of the name's routing sees, looked up beside its ownership record: nothing is looked up when the
 * service has no target for it (`no_target`); a name of the test zone is pointed at once in the sandbox and
 * `missing` elsewhere, as its ownership record is.
 */
export async function lookUpRouting(checks: DomainChecks, name: string): Promise<RoutingObservation> {
  const targets = targetsOf(checks);
  const kind = domainKind(name);
  const none = { error: 'ENODATA' };
  if (checks.routing === undefined || routingWay(kind, targets) === 'none') {
    return observeRouting(name, kind, targets, { cname: none, a: none, aaaa: none });
  }
  if (inTestZone(name)) {
    return checks.sandbox
      ? {
          code: 'pointed',
          message: `A name under ${TEST_ZONE}, the sandbox's test zone: pointed at once, without DNS.`,
          observed: EMPTY_OBSERVED,
        }
      : {
          code: 'missing',
          message: `A name under ${TEST_ZONE}, the sandbox's test zone: such names are pointed only in the sandbox, never here.`,
          observed: EMPTY_OBSERVED,
        };
  }
  return observeRouting(name, kind, targets, await checks.routing.lookup(name));
}

/**
 * Counts a verify of the account's domain against the per-domain quota; in one transaction, with the domain's
 * row locked on PostgreSQL, so that instances count together. The window is kept by account and name, so that a
 * delete and a new store of the name does not open a fresh one. Undefined when the account has no such domain;
 * the domain's name when counted.
 */
export async function countVerifyOf(
  db: Database,
  accountId: number,
  id: number,
  quota: Quota | undefined,
  now = new Date(),
): Promise<{ counted: true; name: string } | { retryAfterSeconds: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    const query = trx.selectFrom('domains').select('name').where('account_id', '=', accountId).where('id', '=', id);
    const domain = await lockedForUpdate(trx, query).executeTakeFirst();
    if (!domain) return undefined;
    const { name } = domain;
    if (!quota) return { counted: true, name };
    const row = await trx
      .selectFrom('domain_verify_windows')
      .select(['started_at', 'count'])
      .where('account_id', '=', accountId)
      .where('name', '=', name)
      .executeTakeFirst();
    const window = row ? { startedAt: new Date(row.started_at), count: Number(row.count) } : EMPTY_WINDOW;
    const counted = countVerify(window, quota, now);
    if ('retryAfterSeconds' in counted) return counted;
    const startedAt = (counted.startedAt ?? now).toISOString();
    await trx
      .insertInto('domain_verify_windows')
      .values({ account_id: accountId, name, started_at: startedAt, count: counted.count })
      .onConflict((conflict) =>
        conflict.columns(['account_id', 'name']).doUpdateSet({ started_at: startedAt, count: counted.count }),
      )
      .execute();
    return { counted: true, name };
  });
}

const EMPTY_WINDOW = { startedAt: null, count: 0 };

/** Deletes up to `batchSize` verify windows that ended before `before`; how many. */
export async function pruneVerifyWindows(db: Database, { before, batchSize }: PruneBatch): Promise<number> {
  const ended = db
    .selectFrom('domain_verify_windows')
    .select(['account_id', 'name'])
    .where('started_at', '<', before.toISOString())
    .orderBy('started_at')
    .limit(batchSize);
  const result = await db
    .deleteFrom('domain_verify_windows')
    .where((eb) => eb(eb.refTuple('account_id', 'name'), 'in', ended.$asTuple('account_id', 'name')))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
