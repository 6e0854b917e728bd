// The types a value of a dereferenced JSON Schema may have on a given carrier (JSON, a form, a query).

import { flatten, type Schema } from '../../server/spec-model.js';

export type Carrier = 'json' | 'form' | 'query';

/** The schema's types, minus null where the carrier cannot express it. */
export function typesOf(schema: Schema, carrier: Carrier): string[] {
  const flat = flatten(schema);
  const declared = Array.isArray(flat.type) ? (flat.type as string[]) : flat.type ? [flat.type as string] : [];
  const types = declared.length ? declared : inferType(flat);
  return carrier === 'json' ? types : types.filter((type) => type !== 'null');
}

function inferType(schema: Schema): string[] {
  if (schema.properties) return ['object'];
  if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))];
  return ['string'];
}
