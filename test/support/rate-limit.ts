// Reads the IETF RateLimit fields (draft 8) of a response in tests.
import { expect } from 'vitest';

export type PolicyItem = { name: string; [parameter: string]: string | number };

/** The parameters of one policy item of a draft-8 field, e.g. `"api-key"; r=5; t=60` → { name, r: 5, t: 60 }. */
export function policyItem(field: string | null): PolicyItem {
  expect(field, 'the rate-limit field is missing').toBeTruthy();
  const [name = '', ...parameters] = (field as string).split(';').map((part) => part.trim());
  const item: PolicyItem = { name: JSON.parse(name) };
  for (const parameter of parameters) {
    const [key = '', value = ''] = parameter.split('=');
    item[key] = /^\d+$/.test(value) ? Number(value) : value;
  }
  return item;
}
