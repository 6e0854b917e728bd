// Applies a check to a domain in one transaction: its observation, the state it leads to, and when a record is
// found while another account holds the name, the move of the name. Every change of a domain's state goes
// through `transition`, inside the transaction that changes the row.
import type { Transaction } from 'kysely';
import { type Database, isUniqueViolation, lockedForUpdate } from '../db/database.js';
import { type ChangeCause, SYSTEM_CAUSE } from '../db/owned.js';
import type { DB } from '../db/schema.js';
import { etagOf } from '../etag.js';
import { type EventSubscriber, previousAttributes, recordEvent } from '../events/outbox.js';
import {
  afterCheck,
  type CheckOutcome,
  type CheckSchedule,
  challengeName,
  challengeValue,
  type DomainStatus,
  HOLDING_STATES,
  holdsName,
  type LookupResult,
  type Observation,
  observe,
} from './check-rules.js';
import { type DomainRow, routingOf, toRecord } from './repository.js';
import type { RoutingObservation } from './routing-rules.js';
import { domainKind, NO_TARGETS, type RoutingTargets } from './routing-targets.js';

/**
 * Who asked for a check (a verify's request, or nobody: the scheduler), the event log's subscriber, and the
 * routing targets the events' records are shown with.
 */
export interface CheckEvents {
  cause: ChangeCause;
  subscriber: EventSubscriber;
  targets?: RoutingTargets;
}

/** What one check saw: the ownership record's lookup (or a verdict without one), and the routing's observation. */
export interface CheckSeen {
  result: LookupResult | Observation;
  routing: RoutingObservation;
}

/** The cause of a change nobody asked for: a scheduled check, or what a check does to another account's domain. */
export const SCHEDULED_CAUSE: ChangeCause = SYSTEM_CAUSE;

type Trx = Transaction<DB>;

/**
 * Writes a check's outcome to the domain's row: observation, times, and its new status. The one place where a
 * domain changes state (an event of the change belongs here, in this transaction), and with `routing` the one
 * where its routing changes (`domain.routing_changed` when its code does). Returns the new row.
 */
export async function transition(
  trx: Trx,
  domain: DomainRow,
  to: CheckOutcome & { claimedElsewhereAt?: Date },
  observation: Observation,
  now: Date,
  events: CheckEvents,
  routing?: RoutingObservation,
): Promise<DomainRow> {
  const changed = to.status !== domain.status;
  const targets = events.targets ?? NO_TARGETS;
  const kind = domainKind(domain.name);
  const routingBefore = routingOf(domain, kind, targets);
  // A failed lookup keeps what was last seen, and the next check comes soon, as for the ownership record.
  const routingStored = routing && {
    code: routing.code,
    message: routing.message,
    observed: routing.code === 'lookup_failed' ? routingBefore.observed : routing.observed,
  };

  const row = await trx
    .updateTable('domains')
    .set((eb) => ({
      status: to.status,
      state_since: to.since.toISOString(),
      observation: JSON.stringify(observation),
      last_checked_at: now.toISOString(),
      next_check_at: to.nextCheckAt?.toISOString() ?? null,
      ...(routingStored
        ? {
            routing_code: routingStored.code,
            routing: JSON.stringify({ message: routingStored.message, observed: routingStored.observed }),
            routing_checked_at: now.toISOString(),
          }
        : {}),
      ...(to.verified ? { verified_at: now.toISOString() } : {}),
      claimed_elsewhere_at: to.status === 'claimed_elsewhere' ? (to.claimedElsewhereAt ?? now).toISOString() : null,
      ...(changed ? { updated_at: now.toISOString() } : {}),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', domain.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  // The state change's event, in the transaction that changes the state (domain.active, .misconfigured,
  // .claimed_elsewhere, .expired: nothing makes a domain pending again, so domain.pending is never sent).
  const object = toRecord(row, targets);
  const etag = etagOf(Number(row.id), Number(row.version));
  const accountId = Number(row.account_id);
  if (changed) {
    const type = `domain.${row.status as DomainStatus}` as const;
    const data = { object, etag, previous_attributes: previousAttributes(toRecord(domain, targets), object) };
    await recordEvent(trx, { accountId, type, data, cause: events.cause }, events.subscriber);
  }
  if (object.routing.code !== routingBefore.code) {
    const data = { object, etag, previous_attributes: { routing: routingBefore } };
    await recordEvent(trx, { accountId, type: 'domain.routing_changed', data, cause: events.cause }, events.subscriber);
  }
  return row;
}

/** The row of a domain, locked for the transaction on PostgreSQL (SQLite's write transaction is exclusive). */
async function locked(trx: Trx, build: (trx: Trx) => ReturnType<typeof selectDomains>) {
  return lockedForUpdate(trx, build(trx)).execute();
}
const selectDomains = (trx: Trx) => trx.selectFrom('domains').selectAll();

/**
 * Applies one lookup of the domain's record (or the sandbox's `test_zone` observation) to domain `id`; undefined
 * when the domain is gone. Of two domains proving one name at once, the partial unique index lets one become
 * active; the other's transaction fails and is applied again, and then sees the winner as the holder.
 */
export async function applyCheck(
  db: Database,
  id: number,
  seen: CheckSeen,
  schedule: CheckSchedule,
  now: Date,
  events: CheckEvents,
): Promise<DomainRow | undefined> {
  try {
    return await applyOnce(db, id, seen, schedule, now, events);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    return applyOnce(db, id, seen, schedule, now, events);
  }
}

async function applyOnce(
  db: Database,
  id: number,
  { result, routing }: CheckSeen,
  schedule: CheckSchedule,
  now: Date,
  events: CheckEvents,
): Promise<DomainRow | undefined> {
  return db.transaction().execute(async (trx) => {
    const [domain] = await locked(trx, (t) => selectDomains(t).where('id', '=', id));
    if (!domain) return undefined;
    let observation = 'code' in result ? result : observe(result, domain.name, domain.verification_token);
    const state = { status: domain.status as DomainStatus, since: new Date(domain.state_since) };
    if (observation.code === 'found' && !holdsName(domain.status)) {
      // Only the holder is locked, never other pending claims: two provers locking each other would deadlock.
      const [holder] = await locked(trx, (t) =>
        selectDomains(t)
          .where('name', '=', domain.name)
          .where('id', '!=', domain.id)
          .where('status', 'in', [...HOLDING_STATES]),
      );
      const seen = 'values' in result && !('code' in result) ? result.values : [];
      if (holder && seen.includes(challengeValue(holder.verification_token))) {
        observation = {
          code: 'held_elsewhere',
          message:
            "Found this domain's record, but another account holds the name and its own record is still published there; the name stays with it until that record is removed.",
          values: observation.values,
        };
      } else if (holder) {
        // The holder no longer proves the name: it moves to this domain. The holder's event is its own account's,
        // so it carries no request of the prover's account (a cause belongs to the account that made it).
        await transition(
          trx,
          holder,
          { status: 'claimed_elsewhere', since: now, nextCheckAt: null, verified: false, claimedElsewhereAt: now },
          {
            code: 'missing',
            message: `Another account proved control of ${domain.name} while this domain's record was not published at ${challengeName(domain.name)}; the name moved to that account.`,
            values: observation.values,
          },
          now,
          { ...events, cause: holder.account_id === domain.account_id ? events.cause : SCHEDULED_CAUSE },
        );
      }
    }
    const outcome = afterCheck(state, observation.code, now, schedule);
    // A failed routing lookup is retried as soon as a failed ownership lookup would be.
    if (routing.code === 'lookup_failed' && outcome.nextCheckAt) {
      const retry = now.getTime() + schedule.retryMs;
      if (outcome.nextCheckAt.getTime() > retry) outcome.nextCheckAt = new Date(retry);
    }
    return transition(trx, domain, outcome, observation, now, events, routing);
  });
}
