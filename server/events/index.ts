// The event log, as the registry (server/resources.ts) lists it.
import { idCursorFormats } from '../http/id-cursor.js';
import type { ApiModule } from '../resource.js';
import type { WebhookSettings } from '../webhooks/settings.js';
import { type EventOperation, eventHandlers } from './handlers.js';

export const events: ApiModule<'events', EventOperation, { webhooks: WebhookSettings }> = {
  name: 'events',
  formats: idCursorFormats,
  handlers: (db, { webhooks }) => eventHandlers(db, webhooks),
};
