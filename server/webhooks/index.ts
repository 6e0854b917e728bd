// The webhook endpoints, as the registry (server/resources.ts) lists them.
import type { EventSettings } from '../events/settings.js';
import type { ApiModule } from '../resource.js';
import { type WebhookEndpointOperation, webhookEndpointHandlers } from './handlers.js';
import { webhookEndpointRepository } from './repository.js';
import { urlProblem } from './safe-target.js';
import type { WebhookSettings } from './settings.js';

export const webhookEndpoints: ApiModule<
  'webhook-endpoints',
  WebhookEndpointOperation,
  { webhooks: WebhookSettings; events: EventSettings }
> = {
  name: 'webhook-endpoints',
  formats: {
    // The form only: whether the URL is a safe target depends on the settings, and is the handler's to judge.
    'webhook-url': {
      validate: (value) => value.isWellFormed() && !/\s/.test(value) && urlProblem(value, true) === undefined,
      message: 'must be an absolute https:// URL (or http:// where the operator allows it)',
    },
  },
  handlers: (db, { webhooks, events }) => webhookEndpointHandlers(db, webhookEndpointRepository(db), webhooks, events),
};
