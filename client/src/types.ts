// The client's public types, all taken from the generated contract types (generated/api.ts), never restated.
import type { components, operations } from '../../generated/api.js';

type Schemas = components['schemas'];

export type Domain = Schemas['domain'];
export type DomainCollection = Schemas['domain-collection'];
/** The body of `domains.create` (the contract's store schema). */
export type DomainCreate = Schemas['domain-store'];
/** The body of `domains.update` and `domains.replace`: a domain's name cannot change. */
export type DomainUpdate = Schemas['domain-update'];
export type DomainListParams = NonNullable<operations['domains_list']['parameters']['query']>;
/** Where a domain stands in proving its name: pending, active, misconfigured, claimed_elsewhere, expired. */
export type DomainStatus = Schemas['domain-status'];
/** The TXT record that proves a domain: `{ type: 'txt', name, value }`. */
export type DomainVerification = Schemas['domain-verification'];
/** What the last check of a domain's record saw: `{ code, message, values }`. */
export type DomainObservation = Schemas['domain-observation'];
/** Whether a domain is the registrable domain itself (`apex`, routed with A/AAAA) or below one (`subdomain`). */
export type DomainKind = Schemas['domain-kind'];
/** One record a domain's owner publishes: `{ type, name, value, purpose: 'ownership' | 'routing' }`. */
export type DnsRecord = Schemas['domain-dns-record'];
/** Whether a domain's traffic reaches the service: `{ code, message, observed: { cname, a, aaaa }, checked_at }`. */
export type DomainRouting = Schemas['domain-routing'];
/** pointed, not_pointed, partly_pointed, missing, lookup_failed, not_checked, no_target. */
export type RoutingCode = DomainRouting['code'];
/** Your own keys and text values on a domain, space or webhook endpoint. */
export type Metadata = Schemas['metadata'];

export type Space = Schemas['space'];
export type SpaceCollection = Schemas['space-collection'];
/** The body of `spaces.create` (the contract's store schema); color defaults to 1. */
export type SpaceCreate = Schemas['space-store'];
/** The body of `spaces.update` and `spaces.replace`. */
export type SpaceUpdate = Schemas['space-update'];
export type SpaceListParams = NonNullable<operations['spaces_list']['parameters']['query']>;

export type PaginationLinks = Schemas['pagination-links'];
export type PaginationMeta = Schemas['pagination-meta'];
/** An `application/problem+json` error body. */
export type Problem = Schemas['problem'];
export type FieldError = Schemas['field-error'];

/** Every event: the body of a webhook delivery and an entry of `GET /events` (narrow it by `type`). */
export type WebhookEvent = Schemas['event'];
/** The payload of one event type, e.g. `WebhookEventOf<'space.updated'>`. */
export type WebhookEventOf<T extends WebhookEvent['type']> = Extract<WebhookEvent, { type: T }>;
export type WebhookEndpoint = Schemas['webhook-endpoint'];
/** The body of `webhookEndpoints.create` (JSON only: `enabled_events` is a list). */
export type WebhookEndpointCreate = Schemas['webhook-endpoint-store'];
/** The body of `webhookEndpoints.update` and `webhookEndpoints.replace`. */
export type WebhookEndpointUpdate = Schemas['webhook-endpoint-update'];
/** An endpoint as create and rotateSecret answer it: the record, and its signing secret, shown this once. */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };
export type WebhookDelivery = Schemas['webhook-delivery'];
export type WebhookDeliveryPage = Schemas['webhook-delivery-collection'];
export type WebhookDeliveryParams = NonNullable<operations['webhook-endpoints_deliveries']['parameters']['query']>;
export type WebhookRecoveryParams = NonNullable<operations['webhook-endpoints_recoveries']['parameters']['query']>;
export type EventPage = Schemas['event-collection'];
export type EventListParams = NonNullable<operations['events_list']['parameters']['query']>;
/** What a redelivery queued: `{ event_id, endpoint_ids }`. */
export type Redelivery = Schemas['redelivery'];
/** A recovery of an endpoint's events since a time: its window, status and counts. */
export type WebhookRecovery = Schemas['webhook-recovery'];
/** The body of `webhookEndpoints.recover`: `{ since, until? }` (ISO 8601 instants). */
export type WebhookRecoverRequest = Schemas['webhook-recover-request'];
export type WebhookRecoveryPage = Schemas['webhook-recovery-collection'];
/** One event type: its description, read scope, whether it may be subscribed to, its payload's JSON Schema. */
export type EventTypeInfo = Schemas['event-type-info'];

/** An API key of the account, without its secret. */
export type ApiKey = Schemas['api-key'];
/** A scope a key may hold. */
export type ApiKeyScope = Schemas['api-key-scope'];
/** The body of `apiKeys.create`: what is left out is the calling key's own (scopes, expiry, ranges). */
export type ApiKeyCreate = Schemas['api-key-store'];
/** A key as create answers it: the record, and `secret` (the whole key), shown this once; null in a replay. */
export type ApiKeyWithSecret = ApiKey & { secret: string | null };
/** What a rotation answers: the successor with its `secret`, and the rotated key as it now is (`replaced`). */
export type ApiKeyRotation = ApiKey & { secret: string; replaced: ApiKey };
export type ApiKeyPage = Schemas['api-key-collection'];
export type ApiKeyListParams = NonNullable<operations['api-keys_list']['parameters']['query']>;

export type { components, operations, paths, webhooks } from '../../generated/api.js';
