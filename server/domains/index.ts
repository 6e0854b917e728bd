// The domains resource, as the registry (server/resources.ts) lists it.
import { SYSTEM_CAUSE } from '../db/owned.js';
import { type EventSubscriber, eventLog } from '../events/outbox.js';
import type { ResourceModule } from '../resource.js';
import { webhookFanOut } from '../webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/settings.js';
import { DEFAULT_SCHEDULE, TEST_ZONE } from './check-rules.js';
import type { DomainChecks } from './checks.js';
import { domainFormats } from './fields.js';
import { type DomainOperation, domainHandlers } from './handlers.js';
import { domainRepository, type NewDomain } from './repository.js';
import { storeDomain } from './store.js';

/**
 * A new sandbox account's domains: names of the test zone, which the sandbox verifies at its first check (or at
 * once with a verify); they carry the account's tag, as a name is held by one account.
 */
const sandboxDomains = (tag: string): NewDomain[] => [
  {
    name: `shop-${tag}.${TEST_ZONE}`,
    index_page: `https://shop-${tag}.${TEST_ZONE}/welcome.html`,
    not_found_page: `https://shop-${tag}.${TEST_ZONE}/404.html`,
  },
  { name: `blog-${tag}.${TEST_ZONE}`, index_page: null, not_found_page: null },
];

/** The sandbox seeds its records itself, outside any request. */
const SEEDED = SYSTEM_CAUSE;

export const domains: ResourceModule<
  'domains',
  DomainOperation,
  { domainChecks: DomainChecks; fanOut: EventSubscriber }
> = {
  name: 'domains',
  formats: domainFormats,
  handlers: (db, { domainChecks, fanOut }) => domainHandlers(db, domainChecks, fanOut),
  examples: {
    store: (tag) => ({ name: `${tag}.example.com` }),
    update: (tag) => ({ index_page: `https://${tag}.example.com/index.html` }),
  },
  seed: async (db, accountId, tag) => {
    const repository = domainRepository(
      db,
      DEFAULT_SCHEDULE,
      eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)),
    );
    for (const domain of sandboxDomains(tag)) {
      const outcome = await storeDomain(repository, accountId, domain, SEEDED);
      if (outcome.kind !== 'stored') throw new Error(`sandbox domain ${domain.name} not stored: ${outcome.kind}`);
    }
  },
};
