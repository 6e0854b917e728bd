// The endpoint policy, in one place: when an endpoint is disabled (`gone`: it answered 410; `failing`: no success
// for WEBHOOK_DISABLE_AFTER_S; `queue_full`: more than WEBHOOK_MAX_QUEUE undelivered events) and what that does
// (its queue is cancelled; forced deliveries, a test or a redelivery by name, are left to run), and the notices
// the account's other endpoints hear of it: `webhook_endpoint.disabled`, and `webhook_endpoint.failing` once per
// failing period after WEBHOOK_FAILING_NOTICE_S. A notice is an event of the log like any other, fanned out in the
// transaction that found it; the endpoint it is about is disabled (or failing, and then left out) by then. What an
// endpoint that stops taking a type does with its queued deliveries of that type is the update's
// (repository.ts, cancelUntakenDeliveries).
import type { Database } from '../db/database.js';
import { SYSTEM_CAUSE } from '../db/owned.js';
import { type EventSubscriber, recordEvent } from '../events/outbox.js';
import type { Logger } from '../logger.js';
import { toEndpointRecord } from './repository.js';

export type DisabledReason = 'gone' | 'failing' | 'queue_full';

/**
 * Disables the endpoint and cancels its queued deliveries, in `trx` (the write that found the reason); when it was
 * enabled, records `webhook_endpoint.disabled`, handed to `subscriber` (the fan-out, which skips the endpoint now
 * that it is disabled).
 */
export async function disableEndpoint(
  trx: Database,
  endpointId: number,
  reason: DisabledReason,
  now: Date,
  logger?: Logger,
  subscriber?: EventSubscriber,
): Promise<void> {
  const before = await trx
    .selectFrom('webhook_endpoints')
    .select('status')
    .where('id', '=', endpointId)
    .executeTakeFirst();
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, updated_at: now.toISOString() })
    .where('id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
  if (row && before?.status === 'enabled' && subscriber) {
    await recordEvent(
      trx,
      {
        accountId: Number(row.account_id),
        type: 'webhook_endpoint.disabled',
        data: { object: toEndpointRecord(row, { withholdHeaderValues: true }), disabled_reason: reason },
        cause: SYSTEM_CAUSE,
      },
      subscriber,
    );
  }
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
 * Records `webhook_endpoint.failing` for an endpoint failing since `failingSince`, once per failing period (its
 * failing_notice_at marks it), in `trx`; whether it did.
 */
export async function noticeFailing(
  trx: Database,
  endpointId: number,
  failingSince: string,
  now: Date,
  subscriber: EventSubscriber,
): Promise<boolean> {
  const row = await trx
    .updateTable('webhook_endpoints')
    .set({ failing_notice_at: now.toISOString() })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled')
    .where((eb) => eb.or([eb('failing_notice_at', 'is', null), eb('failing_notice_at', '<', failingSince)]))
    .returningAll()
    .executeTakeFirst();
  if (!row) return false;
  await recordEvent(
    trx,
    {
      accountId: Number(row.account_id),
      type: 'webhook_endpoint.failing',
      data: {
        object: toEndpointRecord(row, { withholdHeaderValues: true }),
        failing_since: new Date(failingSince).toISOString(),
      },
      cause: SYSTEM_CAUSE,
    },
    subscriber,
  );
  return true;
}
