// What the domains module needs to check records: the DNS lookup, the schedule, the per-domain verify limit, and
// whether this is the sandbox (whose test zone verifies at once). Built once from the configuration.
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import type { Quota } from '../http/rate-limit.js';
import {
  type CheckSchedule,
  countVerify,
  DEFAULT_SCHEDULE,
  type LookupResult,
  type Observation,
  TEST_ZONE,
} from './check-rules.js';
import { DEFAULT_TXT_LOOKUP, txtLookup } from './txt-lookup.js';

export interface DomainChecks {
  schedule: CheckSchedule;
  lookup(name: string): Promise<LookupResult>;
  /** Verifies per domain and window; undefined: no limit. */
  verifyQuota: Quota | undefined;
  /** In the sandbox, names of the test zone verify at once, without DNS. */
  sandbox: boolean;
}

export const DEFAULT_VERIFY_QUOTA: Quota = { limit: 10, windowSeconds: 60 };

/** Checks through the system's resolvers on the default schedule: what an app gets unless told otherwise. */
export function defaultDomainChecks(): DomainChecks {
  const lookup = txtLookup(DEFAULT_TXT_LOOKUP);
  return { schedule: DEFAULT_SCHEDULE, lookup, verifyQuota: DEFAULT_VERIFY_QUOTA, sandbox: false };
}

/** The sandbox's observation for a name of its test zone. */
export const TEST_ZONE_FOUND: Observation = {
  code: 'test_zone',
  message: `A name under ${TEST_ZONE}, the sandbox's test zone: verified at once, without DNS.`,
  values: [],
};

/**
 * Counts a verify of the account's domain against the per-domain quota; in one transaction, with the row locked
 * on PostgreSQL, so that instances count together. Undefined when the account has no such domain.
 */
export async function countVerifyOf(
  db: Database,
  accountId: number,
  id: number,
  quota: Quota | undefined,
  now = new Date(),
): Promise<{ counted: true } | { retryAfterSeconds: number } | undefined> {
  return db.transaction().execute(async (trx) => {
    const query = trx
      .selectFrom('domains')
      .select(['id', 'verify_window_started_at', 'verify_count'])
      .where('account_id', '=', accountId)
      .where('id', '=', id);
    const row = await (engineOf(trx) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
    if (!row) return undefined;
    if (!quota) return { counted: true };
    const started = row.verify_window_started_at;
    const window = { startedAt: started === null ? null : new Date(started), count: Number(row.verify_count) };
    const counted = countVerify(window, quota, now);
    if ('retryAfterSeconds' in counted) return counted;
    await trx
      .updateTable('domains')
      .set({ verify_window_started_at: counted.startedAt?.toISOString() ?? null, verify_count: counted.count })
      .where('id', '=', id)
      .execute();
    return { counted: true };
  });
}
