// HTTP handlers of the webhook-endpoint operations: map validated input to the repository and records to
// replies, with the safe-target rule and the per-account limit.

import type { Database } from '../db/database.js';
import { mayRead } from '../events/read-scopes.js';
import type { EventSettings } from '../events/settings.js';
import { requireReadScopes } from '../http/access/scopes.js';
import { nextLink, readIdCursor } from '../http/conventions/id-cursor.js';
import { withinMetadataLimit } from '../http/conventions/metadata-limit.js';
import { HttpProblem, notFound, validationProblem, webhookQueueFull } from '../http/problems/problem.js';
import type { Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import { recoveryRepository, startRecovery } from './recoveries.js';
import type { WebhookEndpointRepository } from './repository.js';
import type { WebhookSettings } from './settings.js';
import { targetProblem } from './target-check.js';
import { sendTestEvent } from './test-event.js';

export type WebhookEndpointOperation =
  | 'webhook-endpoints_list'
  | 'webhook-endpoints_show'
  | 'webhook-endpoints_store'
  | 'webhook-endpoints_update'
  | 'webhook-endpoints_patch'
  | 'webhook-endpoints_delete'
  | 'webhook-endpoints_rotate_secret'
  | 'webhook-endpoints_test'
  | 'webhook-endpoints_deliveries'
  | 'webhook-endpoints_recover'
  | 'webhook-endpoints_recoveries'
  | 'webhook-endpoints_recoveries_show';
type WebhookEndpointHandlers = Pick<Handlers, WebhookEndpointOperation>;

/** 422 naming `url` when the URL is not a safe target (unless the operator allows private targets). */
async function requireSafeTarget(url: string, settings: WebhookSettings): Promise<void> {
  const problem = await targetProblem(url, settings.allowPrivateTargets);
  if (problem === undefined) return;
  const refused = validationProblem([{ location: 'body', field: 'url', message: problem }]);
  throw new HttpProblem('unsafe-webhook-url', `The webhook URL is not a safe target: it ${problem}.`, {
    errors: refused.extra.errors,
  });
}

const endpointNotFound = (id: number) => notFound('webhook endpoint', id);

/** Headers a delivery's own framing or signature owns, which an endpoint's `headers` may not set. */
const HOP_BY_HOP = ['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host'];
const refusedHeader = (name: string) => {
  const lower = name.toLowerCase();
  return (
    HOP_BY_HOP.includes(lower) ||
    lower.startsWith('webhook-') ||
    lower.startsWith('content-') ||
    lower.startsWith('proxy-')
  );
};

/** 422 naming each header of `headers` that a delivery's framing or signature owns (never its value). */
function requireAllowedHeaders(headers: Record<string, string> | null | undefined): void {
  const refused = Object.keys(headers ?? {}).filter(refusedHeader);
  if (refused.length === 0) return;
  throw validationProblem(
    refused.map((name) => ({
      location: 'body' as const,
      field: `headers.${name}`,
      message:
        'is a header the delivery itself sets (webhook-*, content-*, host, proxy-* and hop-by-hop headers are refused)',
    })),
  );
}

/**
 * A recovery's window as ISO instants, `until` now by default (and never later: what is made after the recovery
 * starts is fanned out as usual); 422 naming `since` outside retention or not before `until`.
 */
function recoveryWindow(body: { since: string; until?: string }, retentionMs: number) {
  const now = Date.now();
  const since = Date.parse(body.since);
  const until = Math.min(body.until === undefined ? now : Date.parse(body.until), now);
  const oldest = new Date(now - retentionMs).toISOString();
  const errors = [];
  // The schema's date-time format checks the shape alone: 2026-02-30T25:00:00Z passes it and is no time.
  for (const field of ['since', 'until'] as const) {
    const value = body[field];
    if (value !== undefined && Number.isNaN(Date.parse(value))) {
      errors.push({ location: 'body' as const, field, message: 'must be a date and time that exists' });
    }
  }
  if (errors.length > 0) throw validationProblem(errors);
  if (since < now - retentionMs) {
    errors.push({
      location: 'body' as const,
      field: 'since',
      message: `must lie inside event retention: at or after ${oldest} (events before it are gone)`,
    });
  } else if (since >= until) {
    errors.push({
      location: 'body' as const,
      field: body.until === undefined ? 'since' : 'until',
      message: body.until === undefined ? 'must be in the past' : 'must be after since',
    });
  }
  if (errors.length > 0) throw validationProblem(errors);
  return { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
}

/** 409: the endpoint has WEBHOOK_MAX_QUEUE undelivered events, a test or a redelivery to it included. */
export function webhookEndpointHandlers(
  db: Database,
  endpoints: WebhookEndpointRepository,
  settings: WebhookSettings,
  events: EventSettings,
): WebhookEndpointHandlers {
  const recoveries = recoveryRepository(db);
  const update: WebhookEndpointHandlers['webhook-endpoints_update'] = async ({ account, path, body }) => {
    // Changing what an endpoint receives is subscribing anew: bounded by the key's reads, which the scope step
    // checked for the types sent (http/access/scopes.ts). Re-pointing it also hands the new url what it takes now
    // (deliveries already queued), so it needs the reads of those too, judged once the endpoint is read.
    if (body.url !== undefined) {
      const current = await endpoints.find(account.id, path.id);
      if (!current) throw endpointNotFound(path.id);
      requireReadScopes(
        account.policy,
        current.enabled_events,
        `re-pointing an endpoint receiving ${current.enabled_events.join(', ')}`,
      );
    }
    requireAllowedHeaders(body.headers);
    if (body.url !== undefined) await requireSafeTarget(body.url, settings);
    const endpoint = await withinMetadataLimit(() => endpoints.update(account.id, path.id, body));
    if (!endpoint) throw endpointNotFound(path.id);
    return { status: 200, body: { data: endpoint } };
  };

  return {
    async 'webhook-endpoints_list'({ account }) {
      return { status: 200, body: { data: await endpoints.list(account.id) } };
    },

    async 'webhook-endpoints_show'({ account, path }) {
      const endpoint = await endpoints.find(account.id, path.id);
      if (!endpoint) throw endpointNotFound(path.id);
      return { status: 200, body: { data: endpoint } };
    },

    async 'webhook-endpoints_store'({ account, body, url }) {
      // The key may read what it subscribes to: the scope step checked it (http/access/scopes.ts).
      requireAllowedHeaders(body.headers);
      await requireSafeTarget(body.url, settings);
      const created = await endpoints.create(
        account.id,
        {
          url: body.url,
          enabled_events: body.enabled_events,
          description: body.description ?? null,
          metadata: body.metadata,
          rate_limit: body.rate_limit ?? null,
          headers: body.headers ?? null,
        },
        settings.maxEndpoints,
      );
      if (!created) {
        throw new HttpProblem(
          'too-many-webhook-endpoints',
          `This account has ${settings.maxEndpoints} webhook endpoints, the most it may have; delete one to add another.`,
        );
      }
      return {
        status: 201,
        body: { data: created.record, secret: created.secret },
        location: `${url.path}/${created.record.id}`,
      };
    },

    'webhook-endpoints_update': update,
    'webhook-endpoints_patch': update,

    async 'webhook-endpoints_delete'({ account, path }) {
      if (!(await endpoints.remove(account.id, path.id))) throw endpointNotFound(path.id);
      return { status: 204 };
    },

    async 'webhook-endpoints_rotate_secret'({ account, path }) {
      const rotated = await endpoints.rotateSecret(account.id, path.id, settings.secretOverlapMs);
      if (!rotated) throw endpointNotFound(path.id);
      return { status: 200, body: { data: rotated.record, secret: rotated.secret } };
    },

    async 'webhook-endpoints_test'({ account, path, requestId, actor }) {
      const outcome = await sendTestEvent(
        db,
        { accountId: account.id, endpointId: path.id, cause: causeOf(requestId, actor) },
        settings,
      );
      if (outcome.kind === 'not-found') throw endpointNotFound(path.id);
      if (outcome.kind === 'queue-full') throw webhookQueueFull(path.id, outcome.maxQueue);
      return { status: 202, body: { data: JSON.parse(outcome.payload) } };
    },

    async 'webhook-endpoints_recover'({ account, path, body, url }) {
      const { since, until } = recoveryWindow(body, events.retentionMs);
      const outcome = await startRecovery(db, { accountId: account.id, endpointId: path.id, since, until }, (types) =>
        requireReadScopes(account.policy, types, `recovering events of ${types.join(', ')}`),
      );
      if ('refused' in outcome) {
        if (outcome.refused === 'no-such-endpoint') throw endpointNotFound(path.id);
        if (outcome.refused === 'disabled') {
          throw new HttpProblem(
            'webhook-endpoint-disabled',
            `Webhook endpoint ${path.id} is disabled (${outcome.reason ?? 'manual'}): enable it (status enabled) ` +
              'before recovering its events.',
          );
        }
        throw new HttpProblem(
          'webhook-recovery-running',
          `Recovery ${outcome.recoveryId} of webhook endpoint ${path.id} is still running over an overlapping ` +
            `window; follow it at ${url.path.replace(/\/recover$/, '')}/recoveries/${outcome.recoveryId}.`,
        );
      }
      return {
        status: 202,
        body: { data: outcome },
        location: `${url.path.replace(/\/recover$/, '')}/recoveries/${outcome.id}`,
      };
    },

    async 'webhook-endpoints_recoveries'({ account, path, query, url }) {
      const endpoint = await endpoints.find(account.id, path.id);
      if (!endpoint) throw endpointNotFound(path.id);
      const before = readIdCursor(query.after as string | undefined);
      const page = await recoveries.list(endpoint.id, query.per_page, before);
      return { status: 200, body: { data: page, links: { next: nextLink(url, page, query.per_page) } } };
    },

    async 'webhook-endpoints_recoveries_show'({ account, path }) {
      const recovery = await recoveries.find(account.id, path.id, path.recovery_id);
      if (!recovery) throw notFound('webhook recovery', path.recovery_id);
      return { status: 200, body: { data: recovery } };
    },

    async 'webhook-endpoints_deliveries'({ account, path, query, url }) {
      const endpoint = await endpoints.find(account.id, path.id);
      if (!endpoint) throw endpointNotFound(path.id);
      const before = readIdCursor(query.after as string | undefined);
      const attempts = await endpoints.attempts(endpoint.id, {
        limit: query.per_page,
        before,
        // A receiver may echo what it was sent: its answer is the record's, seen only with the record's read scope.
        readable: (type) => mayRead(account.policy, type),
      });
      return {
        status: 200,
        body: { data: attempts, links: { next: nextLink(url, attempts, query.per_page) } },
      };
    },
  };
}
