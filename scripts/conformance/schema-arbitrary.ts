// JSON Schema (dereferenced) → fast-check arbitrary of values the schema accepts. Forms and query strings cannot
// carry null, so there the null branch of a type is left out. Generated values are re-validated by the caller.
import fc from 'fast-check';
import { flatten, type Schema } from '../../server/spec-model.js';
import { FORMATS } from './formats.js';
import { type Carrier, typesOf } from './schema.js';

export interface ArbitraryContext {
  carrier: Carrier;
  unique: () => string;
}

export function arbitraryOf(schema: Schema, ctx: ArbitraryContext): fc.Arbitrary<unknown> {
  const flat = flatten(schema);
  if (flat.const !== undefined) return fc.constant(flat.const);
  if (Array.isArray(flat.enum)) {
    const values = ctx.carrier === 'json' ? flat.enum : flat.enum.filter((v) => v !== null);
    return fc.constantFrom(...values);
  }
  const arbitraries = typesOf(flat, ctx.carrier).map((type) => ofType(type, flat, ctx));
  return arbitraries.length === 1 ? (arbitraries[0] as fc.Arbitrary<unknown>) : fc.oneof(...arbitraries);
}

function ofType(type: string, schema: Schema, ctx: ArbitraryContext): fc.Arbitrary<unknown> {
  switch (type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = (schema.minimum as number | undefined) ?? -1_000_000;
      const max = (schema.maximum as number | undefined) ?? 1_000_000;
      const whole = fc.integer({ min, max: Math.max(min, max) });
      // Mostly small values near the lower bound, sometimes anywhere up to the bound.
      const near = fc.integer({ min, max: Math.min(max, min + 100) });
      const integers = fc.oneof({ weight: 3, arbitrary: near }, { weight: 1, arbitrary: whole });
      return type === 'integer'
        ? integers
        : fc.oneof(integers, fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
    }
    case 'string':
      return stringOf(schema, ctx);
    case 'array': {
      const items = (schema.items ?? {}) as Schema;
      const maxLength = Math.min((schema.maxItems as number | undefined) ?? 5, 5);
      const minLength = (schema.minItems as number | undefined) ?? 0;
      // uniqueItems: no two items alike (compared as JSON).
      return schema.uniqueItems === true
        ? fc.uniqueArray(arbitraryOf(items, ctx), { minLength, maxLength, selector: (item) => JSON.stringify(item) })
        : fc.array(arbitraryOf(items, ctx), { minLength, maxLength });
    }
    default:
      return objectOf(schema, ctx);
  }
}

function stringOf(schema: Schema, ctx: ArbitraryContext): fc.Arbitrary<string> {
  const minLength = (schema.minLength as number | undefined) ?? 0;
  const maxLength = (schema.maxLength as number | undefined) ?? Number.POSITIVE_INFINITY;
  const format = schema.format as string | undefined;
  // A date-time in a body is half of a window whose order the schema cannot say (a recovery's since and until):
  // only query parameters get them, ordered by their `x-before` (cases.ts).
  const kit = format && !(format === 'date-time' && ctx.carrier !== 'query') ? FORMATS[format] : undefined;
  if (kit) return kit.valid(ctx.unique);
  if (typeof schema.pattern === 'string') {
    return fc
      .stringMatching(new RegExp(schema.pattern, 'u'))
      .filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  const limit = Math.min(maxLength, minLength + 40);
  return fc.oneof(
    fc.string({ unit: 'grapheme-ascii', minLength, maxLength: limit }),
    fc.string({ unit: 'grapheme', minLength, maxLength: Math.max(minLength, Math.min(limit, 12)) }),
  );
}

function objectOf(schema: Schema, ctx: ArbitraryContext): fc.Arbitrary<Record<string, unknown>> {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = ((schema.required ?? []) as string[]).filter((name) => name in properties);
  const model = Object.fromEntries(Object.entries(properties).map(([name, prop]) => [name, arbitraryOf(prop, ctx)]));
  return fc.record(model, { requiredKeys: required });
}
