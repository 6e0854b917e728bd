// domain-space-client: a typed client for the domain-space-service API (domains and spaces).
export {
  type ClientOptions,
  createClient,
  type DomainSpaceClient,
  type DomainsApi,
  type SpacesApi,
} from './client.js';
export { ApiError, DomainSpaceError, isAbortError, NetworkError, TimeoutError } from './errors.js';
export type { CallOptions, ResourceApi } from './resources.js';
export type * from './types.js';
export { VERSION } from './version.js';
