// The domains resource, as the app registers it.
import type { Resource } from '../resource.js';
import { domainFormats } from './fields.js';
import { type DomainOperation, domainHandlers } from './handlers.js';
import { domainRepository } from './repository.js';

export const domains: Resource<DomainOperation> = {
  formats: domainFormats,
  handlers: (db) => domainHandlers(domainRepository(db)),
};
