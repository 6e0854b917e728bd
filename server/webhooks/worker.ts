// The delivery worker: claims due deliveries (a lease in the row, so two processes or instances never send the
// same attempt), sends each (sender.ts), and records the attempt and what follows (retry, success, give up,
// disable the endpoint) guarded by its claim. Everything is in rows, so a restart or a kill -9 loses nothing:
// a claim whose process died runs out and the delivery is taken again.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import { engineOf } from '../db/database.js';
import { onDeliveryQueued } from '../events/outbox.js';
import { pruneEvents } from '../events/repository.js';
import type { Logger } from '../logger.js';
import { honoursRetryAfter, parseRetryAfter, retryDelayMs } from './schedule.js';
import { type AttemptResult, sendAttempt } from './sender.js';
import type { WebhookSettings } from './settings.js';
import { webhookHeaders } from './signature.js';

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'gave_up' | 'gone' | 'cancelled';

export interface DeliveryObserver {
  /** Called once per attempt (or cancellation), with its outcome and latency. */
  attempted(outcome: DeliveryOutcome, latencyMs: number): void;
}

export interface DeliveryWorker {
  /** Stops claiming; resolves once the attempts under way have been recorded. */
  stop(): Promise<void>;
}

interface Claimed {
  id: number;
  endpoint_id: number;
  event_id: number;
  attempts: number;
  forced: number;
}

/** How long a claim holds beyond the attempt's own time limit (recording it included). */
const LEASE_MARGIN_MS = 5_000;
/** How often the event log is pruned of events past their retention. */
const PRUNE_EVERY_MS = 10 * 60_000;

export function startDeliveryWorker(
  db: Database,
  settings: WebhookSettings,
  { logger, observer, random = Math.random }: { logger: Logger; observer?: DeliveryObserver; random?: () => number },
): DeliveryWorker {
  const me = randomUUID();
  const postgres = engineOf(db) === 'postgres';
  let stopped = false;
  let claiming = false;
  /** Settles when the claim under way (if any) has handed out its deliveries: stop() waits for it. */
  let claimSettled: Promise<void> = Promise.resolve();
  let again = false;
  const inFlight = new Set<Promise<void>>();
  let lastPrune = 0;

  async function claim(limit: number): Promise<Claimed[]> {
    const now = new Date();
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + settings.timeoutMs + LEASE_MARGIN_MS).toISOString();
    let due = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('state', '=', 'pending')
      .where('next_attempt_at', '<=', nowIso)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', nowIso)]))
      .orderBy('next_attempt_at')
      .limit(limit);
    // PostgreSQL: instances skip each other's rows instead of queueing behind them.
    if (postgres) due = due.forUpdate().skipLocked();
    const rows = await db
      .updateTable('webhook_deliveries')
      .set({ claimed_by: me, claimed_until: lease })
      .where('id', 'in', due)
      // Judged again on the row as it is when updated (PostgreSQL re-reads a row another transaction changed).
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', nowIso)]))
      .returning(['id', 'endpoint_id', 'event_id', 'attempts', 'forced'])
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      endpoint_id: Number(row.endpoint_id),
      event_id: Number(row.event_id),
      attempts: Number(row.attempts),
      forced: Number(row.forced),
    }));
  }

  async function deliver(delivery: Claimed): Promise<void> {
    const endpoint = await db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', delivery.endpoint_id)
      .executeTakeFirst();
    const event = await db
      .selectFrom('events')
      .select(['public_id', 'payload'])
      .where('id', '=', delivery.event_id)
      .executeTakeFirst();
    if (!endpoint || !event) return; // deleted meanwhile; its deliveries went with it
    if (endpoint.status === 'disabled' && !delivery.forced) {
      await db
        .updateTable('webhook_deliveries')
        .set({ state: 'cancelled', claimed_by: null, claimed_until: null })
        .where('id', '=', delivery.id)
        .where('claimed_by', '=', me)
        .execute();
      observer?.attempted('cancelled', 0);
      return;
    }
    const now = Date.now();
    const secrets = [endpoint.secret];
    const overlapEnds = endpoint.previous_secret_until && new Date(endpoint.previous_secret_until).getTime();
    if (endpoint.previous_secret && overlapEnds && overlapEnds > now) secrets.push(endpoint.previous_secret);
    const attemptedAt = new Date(now).toISOString();
    const result: AttemptResult =
      Buffer.byteLength(event.payload) > settings.maxPayloadBytes
        ? { error: `payload of ${Buffer.byteLength(event.payload)} bytes is over the limit`, latencyMs: 0 }
        : await sendAttempt(
            endpoint.url,
            event.payload,
            webhookHeaders(secrets, event.public_id, Math.floor(now / 1000), event.payload),
            { timeoutMs: settings.timeoutMs, allowPrivate: settings.allowPrivateTargets },
          );
    const outcome = await record(delivery, endpoint.id, attemptedAt, result, endpoint.failing_since);
    if (outcome) observer?.attempted(outcome, result.latencyMs);
    logger.debug('webhook attempt', {
      delivery_id: delivery.id,
      endpoint_id: endpoint.id,
      event_id: event.public_id,
      attempt: delivery.attempts + 1,
      status: result.status ?? null,
      latency_ms: result.latencyMs,
      outcome: outcome ?? 'lost_claim',
      ...(result.error ? { error: result.error } : {}),
    });
  }

  /** Records the attempt and its consequences, if this process still holds the claim; the outcome, or undefined. */
  async function record(
    delivery: Claimed,
    endpointId: number,
    attemptedAt: string,
    result: AttemptResult,
    failingSince: string | Date | null,
  ): Promise<DeliveryOutcome | undefined> {
    const attempt = delivery.attempts + 1;
    const now = Date.now();
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAfter =
      result.status !== undefined && honoursRetryAfter(result.status)
        ? parseRetryAfter(result.retryAfter, now)
        : undefined;
    const delay = ok || gone ? undefined : retryDelayMs(attempt, settings.retryScheduleS, random(), retryAfter);
    const nextAttemptAt = delay === undefined ? null : new Date(now + delay).toISOString();
    const outcome: DeliveryOutcome = ok ? 'succeeded' : gone ? 'gone' : nextAttemptAt ? 'retrying' : 'gave_up';
    return db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('webhook_deliveries')
        .set({
          state: outcome === 'succeeded' ? 'succeeded' : outcome === 'retrying' ? 'pending' : 'failed',
          attempts: attempt,
          next_attempt_at: nextAttemptAt ?? attemptedAt,
          claimed_by: null,
          claimed_until: null,
        })
        .where('id', '=', delivery.id)
        .where('claimed_by', '=', me)
        .executeTakeFirst();
      if (updated.numUpdatedRows === 0n) return undefined; // the claim ran out and another process took it
      await trx
        .insertInto('webhook_attempts')
        .values({
          delivery_id: delivery.id,
          endpoint_id: endpointId,
          attempt,
          attempted_at: attemptedAt,
          status: ok ? 'succeeded' : 'failed',
          response_status: result.status ?? null,
          latency_ms: result.latencyMs,
          response_body: result.body ?? null,
          error: result.error ?? null,
          next_attempt_at: nextAttemptAt,
        })
        .execute();
      const updatedAt = new Date(now).toISOString();
      if (ok) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).execute();
        return outcome;
      }
      const failingFor = failingSince ? now - new Date(failingSince).getTime() : 0;
      const disable = gone ? 'gone' : failingFor >= settings.disableAfterMs ? 'failing' : undefined;
      if (disable) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ status: 'disabled', disabled_reason: disable, updated_at: updatedAt })
          .where('id', '=', endpointId)
          .execute();
        await trx
          .updateTable('webhook_deliveries')
          .set({ state: 'cancelled' })
          .where('endpoint_id', '=', endpointId)
          .where('state', '=', 'pending')
          .where('forced', '=', 0)
          .execute();
        logger.warn('webhook endpoint disabled', { endpoint_id: endpointId, reason: disable });
      } else if (!failingSince) {
        await trx
          .updateTable('webhook_endpoints')
          .set({ failing_since: attemptedAt })
          .where('id', '=', endpointId)
          .execute();
      }
      return outcome;
    });
  }

  async function prune(): Promise<void> {
    if (Date.now() - lastPrune < PRUNE_EVERY_MS) return;
    lastPrune = Date.now();
    const cutoff = new Date(Date.now() - settings.eventRetentionMs).toISOString();
    const pruned = await pruneEvents(db, { before: new Date(cutoff), batchSize: 1000 });
    if (pruned > 0) logger.info('events pruned', { count: pruned, before: cutoff });
  }

  /** Claims what is due while there is room, and starts each delivery. */
  async function tick(): Promise<void> {
    if (stopped) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = true;
    let handedOut = () => {};
    claimSettled = new Promise((resolve) => {
      handedOut = resolve;
    });
    try {
      do {
        again = false;
        const room = settings.concurrency - inFlight.size;
        if (room <= 0) break;
        const claimed = await claim(room);
        for (const delivery of claimed) {
          const running: Promise<void> = deliver(delivery)
            .catch((error: unknown) => {
              logger.error('webhook delivery failed to run', { delivery_id: delivery.id, error: String(error) });
            })
            .finally(() => {
              inFlight.delete(running);
              void tick();
            });
          inFlight.add(running);
        }
        if (claimed.length === room) again = true;
      } while (again && !stopped);
      await prune();
    } catch (error) {
      // The database is away (a restart, a failover): the next poll tries again.
      logger.warn('webhook worker could not claim deliveries', { error: String(error) });
    } finally {
      claiming = false;
      handedOut();
    }
  }

  const timer = setInterval(() => void tick(), settings.pollMs);
  const unsubscribe = onDeliveryQueued(() => void tick());
  void tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribe();
      // A claim under way adds its deliveries after this: each runs to its end before the database closes.
      await claimSettled;
      await Promise.allSettled([...inFlight]);
    },
  };
}
