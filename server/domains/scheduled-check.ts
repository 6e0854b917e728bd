// What the scheduled-check job needs, with a stable signature: claim the due checks fairly, and run one. The
// loop that calls them (timers, concurrency, the DNS query budget) is the job runner's, not this module's.
//
// A claim moves each claimed domain's next_check_at a lease ahead, in one statement (on PostgreSQL through
// FOR UPDATE SKIP LOCKED, so that instances never claim the same row); an instance that dies mid-check leaves
// the lease to run out, and another does the check. The previous release's scheduler claims the same way, so
// both may run side by side during a rolling upgrade.
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { claimedForUpdate } from '../db/database.js';
import type { EventSubscriber } from '../events/outbox.js';
import { type DomainChecks, lookUp, lookUpRouting, targetsOf } from './checks.js';
import { applyCheck, SCHEDULED_CAUSE } from './states.js';

/** A claimed check: the domain, its account and its name (what the lookup needs). */
export interface ClaimedCheck {
  id: number;
  accountId: number;
  name: string;
}

/**
 * Claims up to `limit` due checks for `leaseMs`, fairly: the accounts take turns (each account's oldest due
 * check first, then each one's second, …), and within a turn the account whose checks ran least recently goes
 * first, so that one account's many due checks (claims whose lookups keep failing, say) cannot take every slot
 * while another's wait, even when a claim has room for one check only.
 */
export async function claimDueChecks(
  db: Database,
  limit: number,
  leaseMs: number,
  now = new Date(),
): Promise<ClaimedCheck[]> {
  if (limit <= 0) return [];
  const nowIso = now.toISOString();
  const ranked = db
    .selectFrom('domains')
    .select([
      'id',
      'account_id',
      'next_check_at',
      sql<number>`row_number() over (partition by account_id order by next_check_at, id)`.as('turn'),
    ])
    .where('next_check_at', '<=', nowIso);
  // When each account with due checks was last served: its latest check (index domains_account_checked).
  const accounts = db
    .selectFrom('domains as due')
    .select([
      'due.account_id',
      (eb) =>
        eb
          .selectFrom('domains as checked')
          .select((inner) => inner.fn.max('checked.last_checked_at').as('at'))
          .whereRef('checked.account_id', '=', 'due.account_id')
          .as('served'),
    ])
    .where('due.next_check_at', '<=', nowIso)
    .groupBy('due.account_id');
  const fairest = db
    .selectFrom(ranked.as('ranked'))
    .innerJoin(accounts.as('accounts'), 'accounts.account_id', 'ranked.account_id')
    .select('ranked.id')
    .where('ranked.turn', '<=', limit)
    .orderBy('ranked.turn')
    // Never served first (a boolean orders false first on both engines), then the longest unserved.
    .orderBy(sql`accounts.served is not null`)
    .orderBy('accounts.served')
    .orderBy('ranked.next_check_at')
    .orderBy('ranked.id')
    .limit(limit);
  // The lock is taken on the rows themselves (PostgreSQL allows no FOR UPDATE beside a window function or a
  // GROUP BY), and the due condition is judged again on the row as it is when locked.
  const claimable = claimedForUpdate(
    db,
    db.selectFrom('domains').select('id').where('id', 'in', fairest).where('next_check_at', '<=', nowIso),
  );
  const rows = await db
    .updateTable('domains')
    .set({ next_check_at: new Date(now.getTime() + leaseMs).toISOString() })
    .where('id', 'in', claimable)
    .returning(['id', 'account_id', 'name'])
    .execute();
  return rows.map((row) => ({ id: Number(row.id), accountId: Number(row.account_id), name: row.name }));
}

/**
 * Runs one claimed check: the lookup (or the test zone's verdict) and its outcome, with its events handed to
 * `subscriber` (the configured fan-out). A check of a domain deleted meanwhile does nothing.
 */
export async function runScheduledCheck(
  db: Database,
  checks: DomainChecks,
  domain: ClaimedCheck,
  subscriber: EventSubscriber,
): Promise<void> {
  const [result, routing] = await Promise.all([lookUp(checks, domain.name), lookUpRouting(checks, domain.name)]);
  await applyCheck(db, domain.id, { result, routing }, checks.schedule, new Date(), {
    cause: SCHEDULED_CAUSE,
    subscriber,
    targets: targetsOf(checks),
  });
}
