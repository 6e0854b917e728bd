// A subscription is bounded by what the key may read (as a GitHub App receives only the events its permissions
// cover): an event carries its record, so receiving an event type needs the read scope of that type's records.
// Checked when an endpoint is created, and when its `enabled_events` or its `url` change; redelivery checks the
// event's own type. An endpoint is the account's: it keeps what it was given after its creator key is rotated or
// revoked (spec/GUIDE.md, "Events and webhooks").
import type { components } from '../../generated/api.js';
import { type KeyPolicy, missingScopes } from '../accounts/key-policy.js';

type EnabledEvent = components['schemas']['webhook-enabled-events'][number];

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
  'space.created': true,
  'space.updated': true,
  'space.deleted': true,
  'webhook_endpoint.disabled': true,
  'webhook_endpoint.failing': true,
};

/** Types whose records are not named by their prefix's plural: notices about endpoints are webhooks' records. */
const READ_SCOPE_OF_PREFIX: Record<string, string> = { webhook_endpoint: 'webhooks:read' };

/** The read scope of an event type's records: `domain.active` -> `domains:read`, `webhook.test` -> `webhooks:read`. */
export function readScopeOf(type: string): string {
  const prefix = type.slice(0, type.indexOf('.'));
  return READ_SCOPE_OF_PREFIX[prefix] ?? `${prefix}s:read`;
}

/** Whether an endpoint may list this type in `enabled_events` (`webhook.test` is sent only by a test). */
export function subscribable(type: string): boolean {
  return Object.hasOwn(SUBSCRIBABLE, type);
}

/** The read scopes receiving these types needs; `*` needs those of every type. */
export function scopesToReceive(types: readonly string[]): string[] {
  const all = types.includes('*') ? Object.keys(SUBSCRIBABLE) : types;
  return [...new Set(all.map(readScopeOf))].sort();
}

/** The scopes a key lacks to receive these types (none for a key that holds every scope). */
export function missingToReceive(policy: KeyPolicy | undefined, types: readonly string[]): string[] {
  return missingScopes(policy, scopesToReceive(types));
}
