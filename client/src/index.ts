// domain-space-client: a typed client for the domain-space-service API (domains, spaces, webhook endpoints, events, API keys).
export {
  type ClientOptions,
  createClient,
  type DomainSpaceClient,
  type DomainsApi,
  type ResourceApis,
  type SpacesApi,
} from './client.js';
export { ApiError, DomainSpaceError, isAbortError, NetworkError, TimeoutError } from './errors.js';
export type { ApiKeysApi } from './key-apis.js';
export type { RateLimitState } from './rate-limit.js';
export { type CallOptions, type CreateOptions, etagOf, type ResourceApi, type WriteOptions } from './resources.js';
export type * from './types.js';
export { VERSION } from './version.js';
export type { EventsApi, WebhookEndpointsApi } from './webhook-apis.js';
export { type VerifyOptions, verifyWebhook, WebhookVerificationError } from './webhooks.js';
