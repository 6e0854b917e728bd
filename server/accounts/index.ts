// The account's API keys (/api-keys), as the registry (server/resources.ts) lists them.
import type { EventSubscriber } from '../events/outbox.js';
import { idCursorFormats } from '../http/conventions/id-cursor.js';
import type { ApiModule } from '../resource.js';
import { type ApiKeyOperation, apiKeyHandlers } from './handlers.js';

export const apiKeys: ApiModule<'api-keys', ApiKeyOperation, { fanOut: EventSubscriber }> = {
  name: 'api-keys',
  formats: idCursorFormats,
  handlers: (db, { fanOut }) => apiKeyHandlers(db, fanOut),
};
