// HTTP handlers of the event operations: the event log, read newest first by cursor, and redelivery (the log finds
// the event; what redelivering means is the subscriber's, given as `redeliver`).
import type { Database } from '../db/database.js';
import { requireReadScopes } from '../http/access/scopes.js';
import { nextLink, readIdCursor } from '../http/conventions/id-cursor.js';
import { notFound, validationProblem, webhookQueueFull } from '../http/problems/problem.js';
import type { Handlers } from '../http/routing/operations.js';
import { eventFilters } from './filters.js';
import { readableTypes } from './read-scopes.js';
import { type EventRow, eventRepository } from './repository.js';

export type EventOperation = 'events_list' | 'events_redeliver';

/**
 * What a redelivery came to: the endpoints the event was queued for, or why the one endpoint named got nothing
 * (the account has no such endpoint; its queue is at its limit, `maxQueue`).
 */
export type RedeliveryOutcome =
  | { queued: number[] }
  | { refused: 'no-such-endpoint'; endpointId: number }
  | { refused: 'queue-full'; endpointId: number; maxQueue: number };

/** Queues `event` again for one endpoint or for every one that takes it. */
export type EventRedelivery = (
  db: Database,
  accountId: number,
  event: EventRow,
  endpointId?: number,
) => Promise<RedeliveryOutcome>;

export function eventHandlers(db: Database, redeliver: EventRedelivery): Pick<Handlers, EventOperation> {
  const events = eventRepository(db);
  return {
    async events_list({ account, query, url }) {
      const before = readIdCursor(query.after as string | undefined);
      const type = query.type as string | undefined;
      // The log holds every record's events: a key reads those of the records it may read (read-scopes.ts),
      // filtered in the statement so that pages stay full; asking for a type it may not read is a 403, not [],
      // which the scope step answered before any 422 (http/access/scopes.ts).
      const filters = eventFilters(query);
      if ('errors' in filters) {
        throw validationProblem(filters.errors.map((error) => ({ location: 'query' as const, ...error })));
      }
      const types = readableTypes(account.policy);
      const rows = await events.list(account.id, { type, types, limit: query.per_page, before, ...filters });
      return {
        status: 200,
        body: {
          data: rows.map((row) => JSON.parse(row.payload)),
          links: { next: nextLink(url, rows, query.per_page) },
        },
      };
    },

    async events_redeliver({ account, path, body }) {
      const event = await events.find(account.id, path.id);
      if (!event) throw notFound('event', path.id);
      // The event carries its record: replaying it needs the read scope of that record (events:read and
      // webhooks:write are the operation's own, checked before).
      requireReadScopes(account.policy, [event.type], `redelivering a ${event.type} event`);
      const outcome = await redeliver(db, account.id, event, body.endpoint_id);
      if ('refused' in outcome) {
        throw outcome.refused === 'queue-full'
          ? webhookQueueFull(outcome.endpointId, outcome.maxQueue)
          : notFound('webhook endpoint', outcome.endpointId);
      }
      return { status: 202, body: { data: { event_id: event.publicId, endpoint_ids: outcome.queued } } };
    },
  };
}
