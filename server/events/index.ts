// The event log, as the registry (server/resources.ts) lists it.
import { idCursorFormats } from '../http/conventions/id-cursor.js';
import type { ApiModule } from '../resource.js';
import { type EventOperation, type EventRedelivery, eventHandlers } from './handlers.js';

export const events: ApiModule<'events', EventOperation, { redeliverEvent: EventRedelivery }> = {
  name: 'events',
  formats: idCursorFormats,
  handlers: (db, { redeliverEvent }) => eventHandlers(db, redeliverEvent),
};
