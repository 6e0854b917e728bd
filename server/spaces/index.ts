// The spaces resource, as the registry (server/resources.ts) lists it.
import { SYSTEM_CAUSE } from '../db/owned.js';
import { type EventSubscriber, eventLog } from '../events/outbox.js';
import type { ResourceModule } from '../resource.js';
import { webhookFanOut } from '../webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../webhooks/settings.js';
import { spaceFormats } from './fields.js';
import { type SpaceOperation, spaceHandlers } from './handlers.js';
import { type NewSpace, spaceRepository } from './repository.js';
import { storeSpace } from './rules.js';

/** A new sandbox account's spaces. */
const SANDBOX_SPACES: NewSpace[] = [
  { name: 'Marketing', color: 3 },
  { name: 'Engineering', color: 5 },
  { name: 'Sales', color: 1 },
];

/** The sandbox seeds its records itself, outside any request. */
const SEEDED = SYSTEM_CAUSE;

export const spaces: ResourceModule<'spaces', SpaceOperation, { fanOut: EventSubscriber }> = {
  name: 'spaces',
  formats: spaceFormats,
  handlers: (db, { fanOut }) => spaceHandlers(spaceRepository(db, eventLog('space', fanOut))),
  examples: {
    store: (tag) => ({ name: `${tag} space`, color: 3 }),
    update: (tag) => ({ name: `${tag} space`, color: 6 }),
  },
  seed: async (db, accountId) => {
    const repository = spaceRepository(db, eventLog('space', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)));
    for (const space of SANDBOX_SPACES) await storeSpace(repository, accountId, space, SEEDED);
  },
};
