// The endpoint policy, in one place: when an endpoint is disabled (`gone`: it answered 410; `failing`: no success
// for WEBHOOK_DISABLE_AFTER_S; `queue_full`: more than WEBHOOK_MAX_QUEUE undelivered events) and what that does
// (its queue is cancelled; forced deliveries, a test or a redelivery by name, are left to run); and what an endpoint
// that stops taking a type does with the deliveries of that type it has queued (cancels them, forced ones too).
import type { Database } from '../db/database.js';
import type { Logger } from '../logger.js';

export type DisabledReason = 'gone' | 'failing' | 'queue_full';

/** Disables the endpoint and cancels its queued deliveries, in `trx` (the write that found the reason). */
export async function disableEndpoint(
  trx: Database,
  endpointId: number,
  reason: DisabledReason,
  now: Date,
  logger?: Logger,
): Promise<void> {
  await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now.toISOString() })
    .where('id', '=', endpointId)
    .execute();
  await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'cancelled' })
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .where('forced', '=', 0)
    .execute();
  logger?.warn('webhook endpoint disabled', { endpoint_id: endpointId, reason });
}

/** Why a failed attempt disables its endpoint, if it does: a 410, or failures for longer than `disableAfterMs`. */
export function disableReasonAfterFailure(
  status: number | undefined,
  failingSince: string | Date | null,
  now: number,
  disableAfterMs: number,
): DisabledReason | undefined {
  if (status === 410) return 'gone';
  const failingFor = failingSince ? now - new Date(failingSince).getTime() : 0;
  return failingFor >= disableAfterMs ? 'failing' : undefined;
}

/**
 * Cancels the endpoint's queued deliveries (pending or retrying, forced ones too) of the types `enabledEvents` no
 * longer takes, in `trx` (the update that changed it): an endpoint receives only what it is subscribed to now,
 * whose read scopes the change was checked against (events/read-scopes.ts). A test (`webhook.test`) is kept: it
 * carries no record. How many were cancelled.
 */
export async function cancelUntakenDeliveries(
  trx: Database,
  endpointId: number,
  enabledEvents: readonly string[],
): Promise<number> {
  if (enabledEvents.includes('*')) return 0;
  const kept = [...enabledEvents, 'webhook.test'];
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ state: 'cancelled' })
    .where('endpoint_id', '=', endpointId)
    .where('state', '=', 'pending')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('events')
          .select('events.id')
          .whereRef('events.id', '=', 'webhook_deliveries.event_id')
          .where('events.type', 'not in', kept),
      ),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
