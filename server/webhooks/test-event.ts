// Send a test event to an endpoint, as one story: in one transaction, find the endpoint (read as the fan-out
// reads it, so one deleted meanwhile is not found, never a foreign-key error), record a `webhook.test` event and
// queue its delivery to that endpoint alone, forced (sent even to a disabled endpoint or one not subscribed);
// nothing is kept of a test that cannot be queued. POST /webhook-endpoints/{id}/test (handlers.ts) maps the outcome.
import type { Database } from '../db/database.js';
import { type ChangeCause, inTransaction } from '../db/owned.js';
import { recordEvent } from '../events/outbox.js';
import { lockedEndpoints, queueDeliveries } from './fan-out.js';
import type { WebhookSettings } from './settings.js';

export type TestEventOutcome =
  /** Queued: the event as its deliveries carry it. */
  | { kind: 'queued'; payload: string }
  /** The account has no such endpoint. */
  | { kind: 'not-found' }
  /** The endpoint's queue is at its limit (WEBHOOK_MAX_QUEUE). */
  | { kind: 'queue-full'; maxQueue: number };

/** Raised inside the transaction to undo it, carrying the outcome it ends with. */
class Refused extends Error {
  constructor(readonly outcome: TestEventOutcome) {
    super(outcome.kind);
  }
}

export async function sendTestEvent(
  db: Database,
  { accountId, endpointId, cause }: { accountId: number; endpointId: number; cause: ChangeCause },
  settings: WebhookSettings,
): Promise<TestEventOutcome> {
  try {
    return await inTransaction(db, async (trx) => {
      const endpoint = (await lockedEndpoints(trx, accountId)).find((e) => Number(e.id) === endpointId);
      if (!endpoint) throw new Refused({ kind: 'not-found' });
      let queued: number[] = [];
      const recorded = await recordEvent(
        trx,
        { accountId, type: 'webhook.test', data: { endpoint_id: endpointId }, cause, objectId: endpointId },
        async (on, stored) => {
          queued = await queueDeliveries(on, stored.id, [endpointId], settings, true);
        },
      );
      if (queued.length === 0) throw new Refused({ kind: 'queue-full', maxQueue: settings.maxQueuePerEndpoint });
      return { kind: 'queued', payload: recorded.payload } as const;
    });
  } catch (error) {
    if (error instanceof Refused) return error.outcome;
    throw error;
  }
}
