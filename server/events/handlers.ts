// HTTP handlers of the event operations: the event log, read newest first by cursor, and redelivery.
import type { Database } from '../db/database.js';
import { nextLink, readIdCursor } from '../http/id-cursor.js';
import type { Handlers } from '../http/operations.js';
import { HttpProblem, notFound } from '../http/problem.js';
import type { WebhookSettings } from '../webhooks/settings.js';
import { missingToReceive } from '../webhooks/subscriptions.js';
import { queueDeliveries, wants } from './outbox.js';
import { eventRepository } from './repository.js';

export type EventOperation = 'events_list' | 'events_redeliver';

export function eventHandlers(db: Database, settings: WebhookSettings): Pick<Handlers, EventOperation> {
  const events = eventRepository(db);
  return {
    async events_list({ account, query, url }) {
      const before = readIdCursor(query.after as string | undefined);
      const type = query.type as string | undefined;
      const rows = await events.list(account.id, { type, limit: query.per_page, before });
      return {
        status: 200,
        body: {
          data: rows.map((row) => JSON.parse(row.payload)),
          links: { next: nextLink(url.path, url.sent, rows, query.per_page) },
        },
      };
    },

    async events_redeliver({ account, path, body }) {
      const event = await events.find(account.id, path.id);
      if (!event) throw notFound('event', path.id);
      // The event carries its record: replaying it needs the read scope of that record (events:read and
      // webhooks:write are the operation's own, checked before).
      const missing = missingToReceive(account.policy, [event.type]);
      if (missing.length > 0) {
        throw new HttpProblem(
          403,
          'insufficient-scope',
          `This API key lacks the scope ${missing.join(' and ')}, which redelivering a ${event.type} event needs: ` +
            'a redelivery carries the record, and a key receives only what it may read.',
          { headers: { 'X-Accepted-Scopes': missing.join(', ') } },
        );
      }
      const only = body.endpoint_id;
      const endpoints = await db
        .selectFrom('webhook_endpoints')
        .select(['id', 'enabled_events', 'status'])
        .where('account_id', '=', account.id)
        .execute();
      const targets =
        only === undefined
          ? endpoints.filter((e) => e.status === 'enabled' && wants(e.enabled_events, event.type))
          : endpoints.filter((e) => Number(e.id) === only);
      if (only !== undefined && targets.length === 0) throw notFound('webhook endpoint', only);
      const queued = await queueDeliveries(
        db,
        event.id,
        targets.map((e) => Number(e.id)),
        settings,
        only !== undefined,
      );
      return { status: 202, body: { data: { event_id: event.publicId, endpoint_ids: queued } } };
    },
  };
}
