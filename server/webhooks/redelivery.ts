// Redelivery of a logged event: to one endpoint by name (enabled or not: forced), or to every enabled endpoint that
// takes its type; through the queue and its limit, like any delivery. It answers its outcome; the event log's
// handler maps a refusal to its problem.
import { inTransaction } from '../db/owned.js';
import type { EventRedelivery } from '../events/handlers.js';
import { lockedEndpoints, queueDeliveries, wants } from './fan-out.js';
import type { WebhookSettings } from './settings.js';

export function webhookRedelivery(settings: Pick<WebhookSettings, 'maxQueuePerEndpoint'>): EventRedelivery {
  return async (db, accountId, event, only) =>
    // The endpoints are read in the transaction that queues to them (fan-out.ts, lockedEndpoints): one deleted
    // meanwhile is a 404 when named, and left out of a redelivery to all, never a foreign-key error.
    inTransaction(db, async (trx) => {
      const endpoints = await lockedEndpoints(trx, accountId);
      const targets =
        only === undefined
          ? endpoints.filter((e) => e.status === 'enabled' && wants(e.enabled_events, event.type))
          : endpoints.filter((e) => Number(e.id) === only);
      if (only !== undefined && targets.length === 0) return { refused: 'no-such-endpoint', endpointId: only };
      const queued = await queueDeliveries(
        trx,
        event.id,
        targets.map((e) => Number(e.id)),
        settings,
        only !== undefined,
      );
      if (only !== undefined && queued.length === 0) {
        return { refused: 'queue-full', endpointId: only, maxQueue: settings.maxQueuePerEndpoint };
      }
      return { queued };
    });
}
