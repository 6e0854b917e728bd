// Compile-time checks of the client's resource helpers, run by `npm run typecheck` (not by vitest): each
// ts-expect-error line below must fail to compile, so the helpers really are tied to the contract's paths.
import { type ItemOf, resourceApi, type Send } from '../../client/src/resources.js';
import type { Domain, Space } from '../../client/src/types.js';

declare const send: Send;
const settings = { idempotencyKeys: true };

export const spaces = resourceApi(send, '/spaces', settings);
export const domains = resourceApi(send, '/domains', settings);

// @ts-expect-error a collection path the contract lacks does not compile
export const typo = resourceApi(send, '/spacez', settings);

// @ts-expect-error an item path is not a collection
export const item = resourceApi(send, '/spaces/{id}', settings);

// The results are the contract's records, per resource.
export const space: Promise<Space> = spaces.get(1);
export const domain: Promise<ItemOf<'/domains'>> = domains.create({ name: 'shop.example.com' });

// @ts-expect-error a space is not a domain
export const crossed: Promise<Domain> = spaces.get(1);

// @ts-expect-error a space's color is a number
export const wrongBody = spaces.create({ name: 'Team', color: 'red' });

// @ts-expect-error list parameters are the contract's
export const wrongQuery = domains.list({ colour: 'blue' });
