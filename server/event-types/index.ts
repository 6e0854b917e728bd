// GET /event-types, as the registry (server/resources.ts) lists it: every event type of the contract's `webhooks`
// section, with its description, the read scope a subscription to it needs and its payload's JSON Schema, taken
// from the bundled spec (spec-model.ts inlines every $ref) once, so the spec stays the one source.
import type { components } from '../../generated/api.js';
import { readScopeOf, subscribable } from '../events/read-scopes.js';
import type { Handlers } from '../http/routing/operations.js';
import type { ApiModule } from '../resource.js';
import { ApiSpec } from '../spec-model.js';

type EventTypeInfo = components['schemas']['event-type-info'];

/** The event types as served, in the contract's order. */
export function eventTypesOf(spec: ApiSpec): EventTypeInfo[] {
  return [...spec.model.webhooks].map(([type, schema]) => ({
    type: type as EventTypeInfo['type'],
    description: String(schema.description ?? ''),
    read_scope: readScopeOf(type) as EventTypeInfo['read_scope'],
    subscribable: subscribable(type),
    schema: schema as Record<string, unknown>,
  }));
}

export const eventTypes: ApiModule<'event-types', 'event-types_list', object> = {
  name: 'event-types',
  formats: {},
  handlers: (): Pick<Handlers, 'event-types_list'> => {
    let served: EventTypeInfo[] | undefined;
    return {
      async 'event-types_list'() {
        served ??= eventTypesOf(ApiSpec.load());
        return { status: 200, body: { data: served } };
      },
    };
  },
};
