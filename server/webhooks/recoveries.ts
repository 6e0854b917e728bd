// Recovery of an endpoint's events since a time (POST /webhook-endpoints/{id}/recover): a row that says which
// window to walk and how far the walk has come, and the job that walks it, a batch of events per step, each step
// one transaction under the recovery's lease and its row lock. A step queues one delivery (same webhook-id: the
// event's own) for each event the endpoint subscribes to now and has neither received (a 2xx recorded) nor got
// queued, advances the walk and counts what it queued and what did not fit (WEBHOOK_MAX_QUEUE), all at once: so
// a kill, a restart or a second instance resumes where the last committed step ended, and nothing is queued twice.
// Fair: each claim takes at most one recovery per account, the one stepped longest ago first, and what a step
// queues goes through the delivery job's fair claims like any other delivery.
import { type Selectable, sql } from 'kysely';
import type { components } from '../../generated/api.js';
import { claimFreeRecoveries } from '../db/claims.js';
import { type Database, keptFromDelete, lockedForNoKeyUpdate, lockedForUpdate, toIso } from '../db/database.js';
import { inTransaction } from '../db/owned.js';
import type { WebhookRecoveriesTable } from '../db/schema.js';
import { notifyAtCommit } from '../db/wakeups.js';
import type { Job } from '../jobs/runner.js';
import { DELIVERIES_TOPIC, noticeSubject, wants } from './fan-out.js';
import type { WebhookSettings } from './settings.js';

export type RecoveryRecord = components['schemas']['webhook-recovery'];

/** The wake-up topic of the recovery job (db/wakeups.ts). */
export const RECOVERIES_TOPIC = 'webhook_recoveries';

/** Events looked at per step. */
export const RECOVERY_BATCH = 500;
/** How long a step's claim holds (a step is one short transaction). */
const LEASE_MS = 15_000;

const isoOrNull = (value: string | Date | null) => (value === null ? null : toIso(value));

type RecoveryRow = Pick<
  Selectable<WebhookRecoveriesTable>,
  'since' | 'until' | 'status' | 'completed_at' | 'created_at'
> & {
  id: number;
  endpoint_id: number;
  queued: number;
  skipped: number;
};

function toRecoveryRecord(row: RecoveryRow): RecoveryRecord {
  return {
    id: Number(row.id),
    endpoint_id: Number(row.endpoint_id),
    since: toIso(row.since),
    until: toIso(row.until),
    status: row.status,
    queued: Number(row.queued),
    skipped: Number(row.skipped),
    created_at: toIso(row.created_at),
    completed_at: isoOrNull(row.completed_at),
  };
}

const COLUMNS = [
  'id',
  'endpoint_id',
  'since',
  'until',
  'status',
  'queued',
  'skipped',
  'created_at',
  'completed_at',
] as const;

/** Why a recovery could not start. */
export type RecoveryRefusal =
  | { refused: 'no-such-endpoint' }
  | { refused: 'disabled'; reason: string | null }
  | { refused: 'running'; recoveryId: number };

/**
 * Starts a recovery of `endpointId` over [since, until), in `db`'s transaction (or one of its own): the endpoint's
 * row is locked against another start meanwhile (FOR NO KEY UPDATE on PostgreSQL, which deliveries' FOR KEY SHARE
 * reads do not wait for; SQLite's transactions take the write lock up front). `check` sees the endpoint's
 * subscription first (the scopes a recovery needs) and may throw.
 */
export async function startRecovery(
  db: Database,
  { accountId, endpointId, since, until }: { accountId: number; endpointId: number; since: string; until: string },
  check: (enabledEvents: string[]) => void,
): Promise<RecoveryRecord | RecoveryRefusal> {
  return inTransaction(db, async (trx) => {
    const query = trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'status', 'disabled_reason', 'enabled_events'])
      .where('account_id', '=', accountId)
      .where('id', '=', endpointId);
    const endpoint = await lockedForNoKeyUpdate(trx, query).executeTakeFirst();
    if (!endpoint) return { refused: 'no-such-endpoint' };
    check(JSON.parse(endpoint.enabled_events) as string[]);
    if (endpoint.status !== 'enabled') return { refused: 'disabled', reason: endpoint.disabled_reason };
    const running = await trx
      .selectFrom('webhook_recoveries')
      .select('id')
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'running')
      .where('since', '<', until)
      .where('until', '>', since)
      .executeTakeFirst();
    if (running) return { refused: 'running', recoveryId: Number(running.id) };
    const now = new Date().toISOString();
    const row = await trx
      .insertInto('webhook_recoveries')
      .values({
        account_id: accountId,
        endpoint_id: endpointId,
        since,
        until,
        status: 'running',
        stepped_at: now,
        created_at: now,
      })
      .returning(COLUMNS)
      .executeTakeFirstOrThrow();
    await notifyAtCommit(trx, RECOVERIES_TOPIC);
    return toRecoveryRecord(row);
  });
}

export function recoveryRepository(db: Database) {
  return {
    async find(accountId: number, endpointId: number, id: number): Promise<RecoveryRecord | undefined> {
      const row = await db
        .selectFrom('webhook_recoveries')
        .select(COLUMNS)
        .where('account_id', '=', accountId)
        .where('endpoint_id', '=', endpointId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row && toRecoveryRecord(row);
    },

    /** One page of the endpoint's recoveries, newest first, below id `before` when given. */
    async list(endpointId: number, limit: number, before?: number): Promise<RecoveryRecord[]> {
      let query = db
        .selectFrom('webhook_recoveries')
        .select(COLUMNS)
        .where('endpoint_id', '=', endpointId)
        .orderBy('id', 'desc')
        .limit(limit);
      if (before !== undefined) query = query.where('id', '<', before);
      return (await query.execute()).map(toRecoveryRecord);
    },
  };
}

/** Claims up to `limit` running recoveries whose lease is free, at most one per account (db/claims.ts). */
function claimRecoveries(db: Database, limit: number, worker: string): Promise<number[]> {
  return claimFreeRecoveries(db, { limit, worker, leaseMs: LEASE_MS });
}

/**
 * One step of a recovery claimed by `worker`: the next batch of the window's events, queued as above, in one
 * transaction that first locks the recovery's row (so a step of another process, after a lease ran out, waits and
 * then sees the walk advanced). Nothing when the claim was lost.
 */
export async function stepRecovery(
  db: Database,
  id: number,
  worker: string,
  { maxQueuePerEndpoint }: Pick<WebhookSettings, 'maxQueuePerEndpoint'>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const mine = trx
      .selectFrom('webhook_recoveries')
      .select(['id', 'account_id', 'endpoint_id', 'since', 'until', 'after_event_id'])
      .where('id', '=', id)
      .where('claimed_by', '=', worker)
      .where('status', '=', 'running');
    const recovery = await lockedForUpdate(trx, mine).executeTakeFirst();
    if (!recovery) return;
    const endpointId = Number(recovery.endpoint_id);
    const now = new Date().toISOString();
    const finish = (status: 'completed' | 'failed', changes: object = {}) =>
      trx
        .updateTable('webhook_recoveries')
        .set({ ...changes, status, completed_at: now, claimed_by: null, claimed_until: null, stepped_at: now })
        .where('id', '=', id)
        .execute();
    const endpointQuery = trx
      .selectFrom('webhook_endpoints')
      .select(['status', 'enabled_events'])
      .where('id', '=', endpointId);
    const endpoint = await keptFromDelete(trx, endpointQuery).executeTakeFirst();
    if (endpoint?.status !== 'enabled') {
      await finish('failed');
      return;
    }
    const batch = await trx
      .selectFrom('events')
      .select(['id', 'type', 'payload'])
      .where('account_id', '=', Number(recovery.account_id))
      .where('id', '>', Number(recovery.after_event_id))
      .where('created_at', '>=', toIso(recovery.since))
      .where('created_at', '<', toIso(recovery.until))
      .orderBy('id')
      .limit(RECOVERY_BATCH)
      .execute();
    const wanted = batch.filter(
      (event) =>
        event.type !== 'webhook.test' &&
        wants(endpoint.enabled_events, event.type) &&
        noticeSubject(event.type, event.payload) !== endpointId,
    );
    let candidates = wanted.map((event) => Number(event.id));
    if (candidates.length > 0) {
      // Never one it has (a 2xx recorded) or will get (queued already).
      const had = await trx
        .selectFrom('webhook_deliveries')
        .select('event_id')
        .where('endpoint_id', '=', endpointId)
        .where('event_id', 'in', candidates)
        .where('state', 'in', ['succeeded', 'pending'])
        .execute();
      const hadIds = new Set(had.map((row) => Number(row.event_id)));
      candidates = candidates.filter((eventId) => !hadIds.has(eventId));
    }
    let queued: number[] = [];
    if (candidates.length > 0) {
      const pending = await trx
        .selectFrom(
          trx
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('endpoint_id', '=', endpointId)
            .where('state', '=', 'pending')
            .limit(maxQueuePerEndpoint)
            .as('p'),
        )
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      const room = Math.max(0, maxQueuePerEndpoint - Number(pending.n));
      queued = candidates.slice(0, room);
    }
    if (queued.length > 0) {
      await trx
        .insertInto('webhook_deliveries')
        .values(
          queued.map((eventId) => ({
            endpoint_id: endpointId,
            event_id: eventId,
            state: 'pending' as const,
            next_attempt_at: now,
            created_at: now,
            recovery_id: id,
          })),
        )
        .execute();
      await notifyAtCommit(trx, DELIVERIES_TOPIC);
    }
    const counts = {
      queued: sql<number>`queued + ${queued.length}`,
      skipped: sql<number>`skipped + ${candidates.length - queued.length}`,
      after_event_id: Number(batch.at(-1)?.id ?? recovery.after_event_id),
    };
    if (batch.length < RECOVERY_BATCH) {
      await finish('completed', counts);
      return;
    }
    await trx
      .updateTable('webhook_recoveries')
      .set({ ...counts, claimed_by: null, claimed_until: null, stepped_at: now })
      .where('id', '=', id)
      .execute();
    await notifyAtCommit(trx, RECOVERIES_TOPIC);
  });
}

/** The recovery job: a step of each claimed recovery, until its window is walked. */
export function recoveryJob(db: Database, settings: WebhookSettings): Job<number> {
  return {
    name: 'webhook recoveries',
    concurrency: 2,
    wakeOn: [RECOVERIES_TOPIC],
    pollMs: Math.max(settings.pollMs, 1_000),
    claim: (limit, worker) => claimRecoveries(db, limit, worker),
    async run(id, worker) {
      await stepRecovery(db, id, worker, settings);
      return undefined;
    },
  };
}
