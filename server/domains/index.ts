// The domains resource, as the registry (server/resources.ts) lists it.
import type { ResourceModule } from '../resource.js';
import { DEFAULT_SCHEDULE } from './check-rules.js';
import { domainFormats } from './fields.js';
import { type DomainOperation, domainHandlers } from './handlers.js';
import { domainRepository, type NewDomain } from './repository.js';

/** A new sandbox account's domains; their names carry the account's tag (an account has one domain per name). */
const sandboxDomains = (tag: string): NewDomain[] => [
  {
    name: `shop-${tag}.example.com`,
    index_page: `https://shop-${tag}.example.com/welcome.html`,
    not_found_page: `https://shop-${tag}.example.com/404.html`,
  },
  { name: `blog-${tag}.example.org`, index_page: null, not_found_page: null },
];

export const domains: ResourceModule<'domains', DomainOperation> = {
  name: 'domains',
  formats: domainFormats,
  handlers: (db, services) => domainHandlers(db, services.domainChecks),
  examples: {
    store: (tag) => ({ name: `${tag}.example.com` }),
    update: (tag) => ({ index_page: `https://${tag}.example.com/index.html` }),
  },
  seed: async (db, accountId, tag) => {
    const repository = domainRepository(db, DEFAULT_SCHEDULE);
    for (const domain of sandboxDomains(tag)) await repository.create(accountId, domain);
  },
};
