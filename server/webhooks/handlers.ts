// HTTP handlers of the webhook-endpoint operations: map validated input to the repository and records to
// replies, with the safe-target rule and the per-account limit.

import type { Database } from '../db/database.js';
import { inTransaction } from '../db/owned.js';
import { recordEvent } from '../events/outbox.js';
import { mayRead } from '../events/read-scopes.js';
import { requireReadScopes } from '../http/access/scopes.js';
import { nextLink, readIdCursor } from '../http/conventions/id-cursor.js';
import { withinMetadataLimit } from '../http/conventions/metadata-limit.js';
import { HttpProblem, notFound, validationProblem, webhookQueueFull } from '../http/problems/problem.js';
import type { Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import { queueDeliveries } from './fan-out.js';
import type { WebhookEndpointRepository } from './repository.js';
import type { WebhookSettings } from './settings.js';
import { targetProblem } from './target-check.js';

export type WebhookEndpointOperation =
  | 'webhook-endpoints_list'
  | 'webhook-endpoints_show'
  | 'webhook-endpoints_store'
  | 'webhook-endpoints_update'
  | 'webhook-endpoints_patch'
  | 'webhook-endpoints_delete'
  | 'webhook-endpoints_rotate_secret'
  | 'webhook-endpoints_test'
  | 'webhook-endpoints_deliveries';
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

/** 409: the endpoint has WEBHOOK_MAX_QUEUE undelivered events, a test or a redelivery to it included. */
export function webhookEndpointHandlers(
  db: Database,
  endpoints: WebhookEndpointRepository,
  settings: WebhookSettings,
): WebhookEndpointHandlers {
  const update: WebhookEndpointHandlers['webhook-endpoints_update'] = async ({ account, path, body }) => {
    // Changing what an endpoint receives is subscribing anew: bounded by the key's reads. Re-pointing it also
    // hands the new url what it takes now (deliveries already queued), so it needs the reads of both.
    if (body.enabled_events !== undefined || body.url !== undefined) {
      const current = await endpoints.find(account.id, path.id);
      if (!current) throw endpointNotFound(path.id);
      const types = [
        ...new Set([...(body.enabled_events ?? []), ...(body.url !== undefined ? current.enabled_events : [])]),
      ];
      requireReadScopes(
        account.policy,
        types,
        `${body.url !== undefined ? 're-pointing' : 'changing'} an endpoint receiving ${types.join(', ')}`,
      );
    }
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
      requireReadScopes(
        account.policy,
        body.enabled_events,
        `creating an endpoint receiving ${body.enabled_events.join(', ')}`,
      );
      await requireSafeTarget(body.url, settings);
      const created = await endpoints.create(
        account.id,
        {
          url: body.url,
          enabled_events: body.enabled_events,
          description: body.description ?? null,
          metadata: body.metadata,
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
      const endpoint = await endpoints.find(account.id, path.id);
      if (!endpoint) throw endpointNotFound(path.id);
      const event = await inTransaction(db, async (trx) => {
        let queued: number[] = [];
        const recorded = await recordEvent(
          trx,
          {
            accountId: account.id,
            type: 'webhook.test',
            data: { endpoint_id: endpoint.id },
            cause: causeOf(requestId, actor),
            objectId: endpoint.id,
          },
          async (on, stored) => {
            queued = await queueDeliveries(on, stored.id, [endpoint.id], settings, true);
          },
        );
        // Nothing is kept of a test that cannot be queued.
        if (queued.length === 0) throw webhookQueueFull(endpoint.id, settings.maxQueuePerEndpoint);
        return recorded;
      });
      return { status: 202, body: { data: JSON.parse(event.payload) } };
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
        body: { data: attempts, links: { next: nextLink(url.path, url.sent, attempts, query.per_page) } },
      };
    },
  };
}
