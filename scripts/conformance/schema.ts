// Reading dereferenced JSON Schemas: allOf flattened, the types a value may have on a given carrier.

export type Schema = Record<string, unknown>;

export type Carrier = 'json' | 'form' | 'query';

/** allOf parts merged into one schema (enough for the keyword-per-part style specs use). */
export function flatten(schema: Schema): Schema {
  const { allOf, ...rest } = schema;
  if (!Array.isArray(allOf)) return schema;
  const merged: Schema = { ...rest };
  for (const part of allOf) {
    const flat = flatten(part as Schema);
    const properties =
      merged.properties || flat.properties
        ? { properties: { ...(merged.properties as object), ...(flat.properties as object) } }
        : {};
    Object.assign(merged, flat, properties);
  }
  return merged;
}

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
