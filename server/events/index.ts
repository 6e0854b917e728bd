// The event log, as the registry (server/resources.ts) lists it.
import { idCursorFormats } from '../http/id-cursor.js';
import type { ApiModule } from '../resource.js';
import { type EventOperation, eventHandlers } from './handlers.js';

export const events: ApiModule<'events', EventOperation> = {
  name: 'events',
  formats: idCursorFormats,
  handlers: (db, { redeliverEvent }) => eventHandlers(db, redeliverEvent),
};
