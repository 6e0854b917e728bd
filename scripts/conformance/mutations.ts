// Negative inputs: each mutation breaks exactly one rule the spec states for one parameter or body field
// (wrong type, out of range, not in the enum, too long or short, bad format, missing, unknown) or for the
// body as a whole (missing, unparseable, undocumented content type).

import type { Operation } from '../../server/spec-model.js';
import { flatten, type Schema } from '../../server/spec-model.js';
import { FORMATS } from './formats.js';
import { carrierOf, type Input, JSON_TYPE } from './inputs.js';
import { typesOf } from './schema.js';

/** Kinds that change the wire form rather than the values; inputs.ts cannot judge those. */
export type WireFault =
  | 'missing_body'
  | 'bad_content_type'
  | 'malformed_body'
  | 'oversized_body'
  | 'unacceptable_accept';

/** An oversized body is padded to this many bytes: far past any sane limit (the spec's own is 16 KiB). */
export const OVERSIZED_BYTES = 1024 * 1024;

/** Media types no JSON API answers with; those the operation does not document become unacceptable Accepts. */
const FOREIGN_MEDIA_TYPES = ['text/html', 'image/png', 'application/xml'];

export interface Mutation {
  /** Stable name of the kind of violation, e.g. "unknown_query" or "out_of_range". */
  kind: string;
  /** What was broken, e.g. "body.color = 7 (maximum 6)". */
  describe: string;
  apply(input: Input): Input;
  wire?: WireFault;
  /** Request headers the mutation sets (an Accept the operation cannot answer). */
  headers?: Record<string, string>;
  /** The body media type the mutation works on: its valid base must carry a body of this type. */
  mediaType?: string;
}

const UNKNOWN = 'conformance_unknown';

export function mutationsOf(operation: Operation): Mutation[] {
  const mutations: Mutation[] = [];
  for (const param of operation.queryParams) {
    for (const broken of brokenValues(param.schema, 'query')) {
      mutations.push({
        kind: broken.kind,
        describe: `query ${param.name} = ${shorten(broken.value)} (${broken.why})`,
        apply: (input) => ({ ...input, query: { ...input.query, [param.name]: broken.value } }),
      });
    }
    if (param.required) {
      mutations.push({
        kind: 'missing_required',
        describe: `query ${param.name} left out`,
        apply: (input) => ({ ...input, query: without(input.query, param.name) }),
      });
    }
  }
  mutations.push({
    kind: 'unknown_query',
    describe: `unknown query parameter ${UNKNOWN}`,
    apply: (input) => ({ ...input, query: { ...input.query, [UNKNOWN]: '1' } }),
  });
  for (const [mediaType, schema] of Object.entries(operation.body?.content ?? {})) {
    const forBody = bodyMutations(mediaType, flatten(schema), operation.body?.required === true);
    mutations.push(...forBody.map((mutation) => ({ ...mutation, mediaType })));
  }
  return [...mutations, ...notAcceptable(operation), ...oversized(operation)];
}

/** Where the spec documents 406: Accepts that rule out every media type the operation answers with. */
function notAcceptable(operation: Operation): Mutation[] {
  if (!operation.responses['406']) return [];
  const produced = [...new Set(Object.values(operation.responses).flatMap((r) => Object.keys(r.content)))];
  const matches = (accept: string, type: string) =>
    accept === type || (accept.endsWith('/*') && type.startsWith(accept.slice(0, -1)));
  const foreign = FOREIGN_MEDIA_TYPES.filter((accept) => !produced.some((type) => matches(accept, type)));
  const accepts = foreign.slice(0, 2);
  // Listing a produced type with q=0 refuses it explicitly, the case servers that only look for a substring miss.
  if (produced[0] && foreign[0]) accepts.push(`${produced[0]};q=0, ${foreign[0]}`);
  return accepts.map((accept) => ({
    kind: 'unacceptable_accept',
    describe: `Accept: ${accept} (the operation answers ${produced.join(', ') || 'no body'})`,
    apply: (input) => input,
    wire: 'unacceptable_accept',
    headers: { Accept: accept },
  }));
}

/** A valid JSON body padded with white space (still valid JSON) to OVERSIZED_BYTES: only its size is wrong. */
function oversized(operation: Operation): Mutation[] {
  const mediaType = Object.keys(operation.body?.content ?? {}).find((type) => carrierOf(type) === 'json');
  if (!mediaType) return [];
  return [
    {
      kind: 'oversized_body',
      describe: `a valid ${mediaType} body padded with white space to ${OVERSIZED_BYTES} bytes`,
      apply: (input) => ({ ...input, body: { mediaType, value: bodyOf(input, mediaType) } }),
      wire: 'oversized_body',
      mediaType,
    },
  ];
}

function bodyMutations(mediaType: string, schema: Schema, required: boolean): Mutation[] {
  const carrier = carrierOf(mediaType);
  const mutations: Mutation[] = [];
  const set = (name: string, value: unknown) => (input: Input) => ({
    ...input,
    body: { mediaType, value: { ...bodyOf(input, mediaType), [name]: value } },
  });
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  for (const [name, property] of Object.entries(properties)) {
    for (const broken of brokenValues(property, carrier)) {
      mutations.push({
        kind: broken.kind,
        describe: `${mediaType} body ${name} = ${shorten(broken.value)} (${broken.why})`,
        apply: set(name, broken.value),
      });
    }
  }
  for (const name of (schema.required ?? []) as string[]) {
    mutations.push({
      kind: 'missing_required',
      describe: `${mediaType} body without required ${name}`,
      apply: (input) => ({ ...input, body: { mediaType, value: without(bodyOf(input, mediaType), name) } }),
    });
  }
  if (schema.additionalProperties === false) {
    mutations.push({
      kind: carrier === 'form' ? 'unknown_form_field' : 'unknown_field',
      describe: `${mediaType} body with unknown field ${UNKNOWN}`,
      apply: set(UNKNOWN, 'x'),
    });
  }
  const withBody = (input: Input) => ({ ...input, body: { mediaType, value: bodyOf(input, mediaType) } });
  mutations.push({
    kind: 'bad_content_type',
    describe: `${mediaType} body sent as text/plain`,
    apply: withBody,
    wire: 'bad_content_type',
  });
  if (mediaType === JSON_TYPE) {
    mutations.push({
      kind: 'malformed_body',
      describe: 'unparseable JSON body',
      apply: withBody,
      wire: 'malformed_body',
    });
  }
  if (required) {
    mutations.push({
      kind: 'missing_body',
      describe: 'no body at all',
      apply: (input) => ({ query: input.query }),
      wire: 'missing_body',
    });
  }
  return mutations;
}

function bodyOf(input: Input, mediaType: string): Record<string, unknown> {
  return input.body?.mediaType === mediaType ? { ...(input.body.value as Record<string, unknown>) } : {};
}

function shorten(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 30)}…" (${String(value).length} characters)` : text;
}

function without(record: Record<string, unknown>, name: string): Record<string, unknown> {
  const { [name]: _dropped, ...rest } = record;
  return rest;
}

interface Broken {
  kind: string;
  value: unknown;
  why: string;
}

/** Values that break exactly one rule of a schema, as far as the carrier can express them. */
function brokenValues(raw: Schema, carrier: 'json' | 'form' | 'query'): Broken[] {
  const schema = flatten(raw);
  const types = typesOf(schema, carrier === 'json' ? 'json' : 'form');
  const broken: Broken[] = [];
  const wrongType = carrier === 'json' ? jsonOfOtherType(types) : textOfOtherType(types);
  if (wrongType !== undefined) {
    // An object in a form travels as `field[key]=value`: a plain `field=abc` is text where the spec has an object,
    // a kind of its own (a mock that reads no form objects cannot refuse it).
    const kind = carrier !== 'json' && types.includes('object') ? 'object_as_text' : 'wrong_type';
    broken.push({ kind, value: wrongType, why: `not ${types.join(' or ')}` });
  }
  const numeric = types.includes('integer') || types.includes('number');
  if (numeric && typeof schema.minimum === 'number') {
    broken.push({ kind: 'out_of_range', value: schema.minimum - 1, why: `minimum ${schema.minimum}` });
  }
  if (numeric && typeof schema.maximum === 'number') {
    broken.push({ kind: 'out_of_range', value: schema.maximum + 1, why: `maximum ${schema.maximum}` });
  }
  if (Array.isArray(schema.enum)) {
    const value = numeric
      ? Math.max(...schema.enum.filter((v): v is number => typeof v === 'number')) + 1
      : `not-${String(schema.enum[0])}`;
    broken.push({ kind: 'not_in_enum', value, why: `one of ${schema.enum.join(', ')}` });
  }
  if (types.includes('string')) {
    const kit = typeof schema.format === 'string' ? FORMATS[schema.format] : undefined;
    if (typeof schema.maxLength === 'number') {
      const length = schema.maxLength + 1;
      broken.push({
        kind: 'too_long',
        value: kit ? kit.ofLength(length) : 'a'.repeat(length),
        why: `maxLength ${schema.maxLength}`,
      });
    }
    if (typeof schema.minLength === 'number' && schema.minLength > 0) {
      broken.push({ kind: 'too_short', value: '', why: `minLength ${schema.minLength}` });
    }
    if (kit) broken.push({ kind: 'bad_format', value: kit.invalid, why: `format ${schema.format}` });
  }
  return broken;
}

function jsonOfOtherType(types: string[]): unknown {
  const candidates: Array<[string[], unknown]> = [
    [['string'], 12345],
    [['integer', 'number'], 'text'],
    [['boolean'], 'text'],
    [['object'], 'text'],
    [['array'], 'text'],
  ];
  if (types.includes('string')) return types.includes('integer') || types.includes('number') ? [1] : 12345;
  for (const [covered, value] of candidates) if (covered.some((type) => types.includes(type))) return value;
  return undefined;
}

/** In a form or query string everything is text: only a non-string type can be broken by letters. */
function textOfOtherType(types: string[]): unknown {
  return types.includes('string') ? undefined : 'abc';
}
