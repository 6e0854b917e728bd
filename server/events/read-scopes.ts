// The one rule of what record data may leave the service: a record is seen (answered, listed, delivered, logged)
// only with its read scope, by a key or by an endpoint acting for its account (as a GitHub App receives and reads
// only the events its permissions cover). An event carries its record, so an event type's read scope is that of
// its records. Every path that hands out an event's record asks here: the event log (filtered), subscriptions
// (an endpoint's create and update), redelivery, and the delivery log (a receiver's answer withheld). An endpoint
// is the account's: it keeps what it was given after its creator key is rotated or revoked (spec/GUIDE.md,
// "Events and webhooks").
import type { components } from '../../generated/api.js';
import { type KeyPolicy, missingScopes } from '../accounts/key-policy.js';

type EnabledEvent = components['schemas']['webhook-enabled-events'][number];
type EventType = components['schemas']['event-type'];

/** Every type the log holds, from the contract (a type added to the spec does not compile until listed here). */
const EVENT_TYPES: Record<EventType, true> = {
  'domain.created': true,
  'domain.updated': true,
  'domain.deleted': true,
  'domain.pending': true,
  'domain.active': true,
  'domain.misconfigured': true,
  'domain.claimed_elsewhere': true,
  'domain.expired': true,
  'domain.routing_changed': true,
  'space.created': true,
  'space.updated': true,
  'space.deleted': true,
  'webhook.test': true,
  'api_key.created': true,
  'api_key.rotated': true,
  'api_key.revoked': true,
  'api_key.expired': true,
  'webhook_endpoint.disabled': true,
  'webhook_endpoint.failing': true,
};

/** Every type an endpoint may subscribe to, from the contract (a type added to the spec must be listed here). */
const SUBSCRIBABLE: Record<Exclude<EnabledEvent, '*'>, true> = {
  'domain.created': true,
  'domain.updated': true,
  'domain.deleted': true,
  'domain.pending': true,
  'domain.active': true,
  'domain.misconfigured': true,
  'domain.claimed_elsewhere': true,
  'domain.expired': true,
  'domain.routing_changed': true,
  'space.created': true,
  'space.updated': true,
  'space.deleted': true,
  'api_key.created': true,
  'api_key.rotated': true,
  'api_key.revoked': true,
  'api_key.expired': true,
  'webhook_endpoint.disabled': true,
  'webhook_endpoint.failing': true,
};

/** Types `*` does not stand for: an endpoint receives them only by name (they need api_keys:read). */
export const NAMED_ONLY = (type: string): boolean => type.startsWith('api_key.');

/** Types whose records are not named by their prefix's plural: notices about endpoints are webhooks' records. */
const READ_SCOPE_OF_PREFIX: Record<string, string> = { webhook_endpoint: 'webhooks:read' };

/**
 * The read scope of an event type's records: `domain.active` -> `domains:read`, `webhook.test` -> `webhooks:read`,
 * `api_key.created` -> `api_keys:read`, `webhook_endpoint.disabled` -> `webhooks:read`.
 */
export function readScopeOf(type: string): string {
  const prefix = type.slice(0, type.indexOf('.'));
  return READ_SCOPE_OF_PREFIX[prefix] ?? `${prefix}s:read`;
}

/** Whether the log holds events of this type (a type of the contract). */
export function isEventType(type: string): boolean {
  return Object.hasOwn(EVENT_TYPES, type);
}

/** Whether an endpoint may list this type in `enabled_events` (`webhook.test` is sent only by a test). */
export function subscribable(type: string): boolean {
  return Object.hasOwn(SUBSCRIBABLE, type);
}

/** The types an endpoint subscribed to `enabledEvents` takes (`*`: every subscribable type but the named-only). */
export function typesTaken(enabledEvents: readonly string[]): string[] {
  if (!enabledEvents.includes('*')) return [...enabledEvents];
  return [...new Set([...Object.keys(SUBSCRIBABLE).filter((type) => !NAMED_ONLY(type)), ...enabledEvents])].filter(
    (type) => type !== '*',
  );
}

/** The read scopes receiving these types needs; `*` needs those of every type. */
export function scopesToReceive(types: readonly string[]): string[] {
  return [...new Set(typesTaken(types).map(readScopeOf))].sort();
}

/** The scopes a key lacks to receive these types (none for a key that holds every scope). */
export function missingToReceive(policy: KeyPolicy | undefined, types: readonly string[]): string[] {
  return missingScopes(policy, scopesToReceive(types));
}

/** Whether a key with this policy may see a record carried by an event of this type. */
export function mayRead(policy: KeyPolicy | undefined, type: string): boolean {
  return missingToReceive(policy, [type]).length === 0;
}

/**
 * The same rule as `mayRead`, as data a query can hold: the event types whose records the key may read, so that
 * a list is filtered in its statement (full pages, cursors that walk to the end); undefined for a key that holds
 * every scope (nothing is filtered).
 */
export function readableTypes(policy: KeyPolicy | undefined): string[] | undefined {
  if (!policy?.scopes) return undefined;
  return Object.keys(EVENT_TYPES).filter((type) => mayRead(policy, type));
}
