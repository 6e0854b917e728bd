// The record of finished delivery attempts: each attempt's row in the delivery log, its delivery's next state
// (succeeded, retried later, failed, or left cancelled) and what it means for the endpoint (failing since, or
// disabled: endpoint-policy.ts), guarded by the claim the attempt was made under. Many attempts at once: the
// delivery job records every attempt finished since its last claim in its next claim's transaction (jobs/runner.ts),
// one write with one insert into the log, instead of one transaction per attempt.
//
// Until then the delivery stays claimed (its lease runs WEBHOOK_TIMEOUT_S plus a margin from its claim, longer than
// an attempt and the wait for the next claim): no other process sends it meanwhile, and it still counts against its
// endpoint's and account's bounds. A process that dies between an attempt and its record loses the record, not the
// delivery: the lease runs out, and the delivery is sent again with the same webhook-id (at least once).
import { type Insertable, sql } from 'kysely';
import type { Database } from '../db/database.js';
import { precompiledOnAny } from '../db/precompiled.js';
import type { WebhookAttemptsTable } from '../db/schema.js';
import type { Logger } from '../logger.js';
import { disableEndpoint, disableReasonAfterFailure, noticeFailing } from './endpoint-policy.js';
import { webhookFanOut } from './fan-out.js';
import { honoursRetryAfter, MAX_RETRY_AFTER_S, parseRetryAfter, retryDelayMs } from './schedule.js';
import type { AttemptResult } from './sender.js';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from './settings.js';

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'gave_up' | 'gone' | 'cancelled';

/** One attempt made, to be recorded. */
export interface FinishedAttempt {
  delivery: { id: number; attempts: number };
  endpointId: number;
  attemptedAt: string;
  result: AttemptResult;
  /** The endpoint's failing_since when the attempt was made. */
  failingSince: string | Date | null;
  /** When the endpoint's last `webhook_endpoint.failing` notice was recorded, if ever (undefined: not read). */
  failingNoticeAt?: string | Date | null;
  /** Whether no retry can help (a payload over the limit). */
  final: boolean;
}

/** Text a database column can hold on both engines: no NUL (PostgreSQL refuses it), no lone surrogate. */
function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').toWellFormed();
}

// The delivery's next state, if `worker` still holds its claim; compiled once per engine (db/precompiled.ts).
const settleDelivery = precompiledOnAny(
  (db, id: number, worker: string, state: string, attempts: number, nextAttemptAt: string) =>
    db
      .updateTable('webhook_deliveries')
      .set({
        state: sql`case when state = 'cancelled' then state else ${state} end`,
        attempts,
        next_attempt_at: nextAttemptAt,
        claimed_by: null,
        claimed_until: null,
      })
      .where('id', '=', id)
      .where('claimed_by', '=', worker)
      .returning('state'),
);

/**
 * Records `finished` in `trx` (a transaction: all or none), in order; per attempt, its outcome, or undefined when
 * `worker` no longer held the claim (it ran out and another process took the delivery).
 */
export async function recordAttempts(
  trx: Database,
  settings: Pick<WebhookSettings, 'retryScheduleS' | 'disableAfterMs'> &
    Partial<Pick<WebhookSettings, 'failingNoticeMs' | 'maxQueuePerEndpoint'>>,
  worker: string,
  finished: readonly FinishedAttempt[],
  { random, logger }: { random: () => number; logger: Logger },
): Promise<Array<DeliveryOutcome | undefined>> {
  const now = Date.now();
  // Each endpoint's failing_since as this batch leaves it: two attempts to one endpoint in a batch see each other.
  const failing = new Map<number, string | Date | null>();
  const disabled = new Set<number>();
  const noticed = new Set<number>();
  // Notices about an endpoint go to the account's other endpoints, queued as any event is.
  const fanOut = webhookFanOut({
    maxQueuePerEndpoint: settings.maxQueuePerEndpoint ?? DEFAULT_WEBHOOK_SETTINGS.maxQueuePerEndpoint,
  });
  const noticeAfterMs = settings.failingNoticeMs ?? DEFAULT_WEBHOOK_SETTINGS.failingNoticeMs;
  const log: Array<Insertable<WebhookAttemptsTable>> = [];
  const outcomes: Array<DeliveryOutcome | undefined> = [];
  for (const { delivery, endpointId, attemptedAt, result, failingSince, failingNoticeAt, final } of finished) {
    const attempt = delivery.attempts + 1;
    const ok = result.status !== undefined && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    const retryAfter =
      result.status !== undefined && honoursRetryAfter(result.status)
        ? parseRetryAfter(result.retryAfter, now)
        : undefined;
    const delay =
      ok || gone || final ? undefined : retryDelayMs(attempt, settings.retryScheduleS, random(), retryAfter);
    // Never due in the past: a retry is at least a moment after the attempt was recorded.
    const nextAttemptAt = delay === undefined ? null : new Date(now + Math.max(delay, 1)).toISOString();
    const outcome: DeliveryOutcome = ok ? 'succeeded' : gone ? 'gone' : nextAttemptAt ? 'retrying' : 'gave_up';
    const state = outcome === 'succeeded' ? 'succeeded' : outcome === 'retrying' ? 'pending' : 'failed';
    const [row] = await settleDelivery(trx, delivery.id, worker, state, attempt, nextAttemptAt ?? attemptedAt);
    if (!row) {
      outcomes.push(undefined);
      continue;
    }
    log.push({
      delivery_id: delivery.id,
      endpoint_id: endpointId,
      attempt,
      attempted_at: attemptedAt,
      status: ok ? 'succeeded' : 'failed',
      response_status: result.status ?? null,
      latency_ms: result.latencyMs,
      response_body: result.body === undefined ? null : storableText(result.body),
      error: result.error === undefined ? null : storableText(result.error),
      next_attempt_at: row.state === 'pending' ? nextAttemptAt : null,
      retry_after_s: retryAfter === undefined ? null : Math.min(retryAfter, MAX_RETRY_AFTER_S),
    });
    if (retryAfter !== undefined && retryAfter > 0) {
      // The receiver asked for a pause: none of the endpoint's deliveries is tried before it ends, by any instance
      // (the claim reads paused_until), not only this one's retry.
      const until = new Date(now + Math.min(retryAfter, MAX_RETRY_AFTER_S) * 1000).toISOString();
      await trx
        .updateTable('webhook_endpoints')
        .set({ paused_until: until })
        .where('id', '=', endpointId)
        .where((eb) => eb.or([eb('paused_until', 'is', null), eb('paused_until', '<', until)]))
        .execute();
    }
    outcomes.push(row.state === 'cancelled' ? 'cancelled' : outcome);
    const since = failing.has(endpointId) ? (failing.get(endpointId) ?? null) : failingSince;
    if (ok) {
      if (since) {
        await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).execute();
      }
      failing.set(endpointId, null);
      continue;
    }
    const disable = disableReasonAfterFailure(result.status, since, now, settings.disableAfterMs);
    if (disable && !disabled.has(endpointId)) {
      await disableEndpoint(trx, endpointId, disable, new Date(now), logger, fanOut);
      disabled.add(endpointId);
    } else if (
      since &&
      !disabled.has(endpointId) &&
      !noticed.has(endpointId) &&
      now - new Date(since).getTime() >= noticeAfterMs &&
      !(failingNoticeAt && new Date(failingNoticeAt).getTime() >= new Date(since).getTime())
    ) {
      noticed.add(endpointId);
      await noticeFailing(trx, endpointId, new Date(since).toISOString(), new Date(now), fanOut);
    } else if (!since) {
      await trx
        .updateTable('webhook_endpoints')
        .set({ failing_since: attemptedAt })
        .where('id', '=', endpointId)
        .execute();
    }
    failing.set(endpointId, since ?? attemptedAt);
  }
  if (log.length > 0) {
    await trx.insertInto('webhook_attempts').values(log).execute();
  }
  return outcomes;
}
