// What the scheduled-check job needs, with a stable signature: claim the due checks fairly, and run one. The
// loop that calls them (timers, concurrency, the DNS query budget) is the job runner's, not this module's.
//
// A claim moves each claimed domain's next_check_at a lease ahead, in one statement (on PostgreSQL through
// FOR UPDATE SKIP LOCKED, so that instances never claim the same row); an instance that dies mid-check leaves
// the lease to run out, and another does the check. The previous release's scheduler claims the same way, so
// both may run side by side during a rolling upgrade.
import { sql } from 'kysely';
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import type { EventSubscriber } from '../events/outbox.js';
import { type DomainChecks, lookUp } from './checks.js';
import { applyCheck, SCHEDULED_CAUSE } from './states.js';

/** A claimed check: the domain, its account and its name (what the lookup needs). */
export interface ClaimedCheck {
  id: number;
  accountId: number;
  name: string;
}

/**
 * Claims up to `limit` due checks for `leaseMs`, fairly: the accounts take turns (each account's oldest due
 * check first, then each one's second, …), so that one account's many due checks (claims whose lookups keep
 * failing, say) cannot take every slot while another's wait.
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
      'next_check_at',
      sql<number>`row_number() over (partition by account_id order by next_check_at, id)`.as('turn'),
    ])
    .where('next_check_at', '<=', nowIso);
  const fairest = db
    .selectFrom(ranked.as('due'))
    .select('due.id')
    .orderBy('due.turn')
    .orderBy('due.next_check_at')
    .orderBy('due.id')
    .limit(limit);
  // The lock is taken on the rows themselves (PostgreSQL allows no FOR UPDATE beside a window function), and
  // the due condition is judged again on the row as it is when locked.
  let claimable = db.selectFrom('domains').select('id').where('id', 'in', fairest).where('next_check_at', '<=', nowIso);
  if (engineOf(db) === 'postgres') claimable = claimable.forUpdate().skipLocked();
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
  const result = await lookUp(checks, domain.name);
  await applyCheck(db, domain.id, result, checks.schedule, new Date(), {
    cause: SCHEDULED_CAUSE,
    subscriber,
  });
}
