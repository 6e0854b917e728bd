// The spaces resource, as the app registers it.
import type { Resource } from '../resource.js';
import { spaceFormats } from './fields.js';
import { type SpaceOperation, spaceHandlers } from './handlers.js';
import { spaceRepository } from './repository.js';

export const spaces: Resource<SpaceOperation> = {
  formats: spaceFormats,
  handlers: (db) => spaceHandlers(spaceRepository(db)),
};
