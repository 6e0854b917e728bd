// The endpoint policy, in one place: when an endpoint is disabled (`gone`: it answered 410; `failing`: no success
// for WEBHOOK_DISABLE_AFTER_S; `queue_full`: more than WEBHOOK_MAX_QUEUE undelivered events) and what that does
// (its queue is cancelled; forced deliveries, a test or a redelivery by name, are left to run).
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
