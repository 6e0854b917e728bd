// Reads the IETF RateLimit fields (draft 8) of a response in tests, with the client's reader.
import { expect } from 'vitest';
import { parseRateLimitItems, rateLimitInteger } from '../../client/src/rate-limit.js';

export type PolicyItem = { name: string; [parameter: string]: string | number };

/** The parameters of the first policy item of a draft-8 field, e.g. `"api-key"; r=5; t=60` → { name, r: 5, t: 60 }. */
export function policyItem(field: string | null): PolicyItem {
  expect(field, 'the rate-limit field is missing').toBeTruthy();
  const [item] = parseRateLimitItems(field as string) ?? [];
  expect(item, `the rate-limit field does not parse: ${field}`).toBeDefined();
  const { name, parameters } = item as NonNullable<typeof item>;
  const values = [...parameters].map(([key, value]) => [key, rateLimitInteger(value) ?? value]);
  return { name, ...Object.fromEntries(values) };
}
