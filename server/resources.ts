// The registry: every collection the API serves, one line each. The resource modules (records an account
// owns) come first; everything else that lists resources (the handlers, the formats, the sandbox's records,
// backups, the tests' fixtures) derives its list from these.
import { apiKeys } from './accounts/index.js';
import { domains } from './domains/index.js';
import { eventTypes } from './event-types/index.js';
import { events } from './events/index.js';
import { spaces } from './spaces/index.js';
import { webhookEndpoints } from './webhooks/index.js';

export const RESOURCES = [domains, spaces] as const;

/** Every module of the API: the resources, and the collections that are not records of an account's own. */
export const MODULES = [...RESOURCES, webhookEndpoints, events, apiKeys, eventTypes] as const;

/** A registered resource's name: its collection path under the base path, and its table. */
export type ResourceName = (typeof RESOURCES)[number]['name'];

/** The registered resources' names, in registration order. */
export const RESOURCE_NAMES: readonly ResourceName[] = RESOURCES.map((resource) => resource.name);

/** Every collection's name (its path under the base path), in registration order. */
export const MODULE_NAMES: readonly string[] = MODULES.map((module) => module.name);
