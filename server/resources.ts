// The registry: every resource the service serves, one line each. Everything else that lists resources (the
// handlers, the formats, the sandbox's records, backups, the tests' fixtures) derives its list from this one.
import { domains } from './domains/index.js';
import { spaces } from './spaces/index.js';

export const RESOURCES = [domains, spaces] as const;

/** A registered resource's name: its collection path under the base path, and its table. */
export type ResourceName = (typeof RESOURCES)[number]['name'];

/** The registered resources' names, in registration order. */
export const RESOURCE_NAMES: readonly ResourceName[] = RESOURCES.map((resource) => resource.name);
