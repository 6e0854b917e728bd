// The spaces resource, as the registry (server/resources.ts) lists it.
import type { ResourceModule } from '../resource.js';
import { spaceFormats } from './fields.js';
import { type SpaceOperation, spaceHandlers } from './handlers.js';
import { type NewSpace, spaceRepository } from './repository.js';

/** A new sandbox account's spaces. */
const SANDBOX_SPACES: NewSpace[] = [
  { name: 'Marketing', color: 3 },
  { name: 'Engineering', color: 5 },
  { name: 'Sales', color: 1 },
];

export const spaces: ResourceModule<'spaces', SpaceOperation> = {
  name: 'spaces',
  formats: spaceFormats,
  handlers: (db) => spaceHandlers(spaceRepository(db)),
  examples: {
    store: (tag) => ({ name: `${tag} space`, color: 3 }),
    update: (tag) => ({ name: `${tag} space`, color: 6 }),
  },
  seed: async (db, accountId) => {
    for (const space of SANDBOX_SPACES) await spaceRepository(db).create(accountId, space);
  },
};
