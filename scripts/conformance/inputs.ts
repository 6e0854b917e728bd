// What one request of an operation carries besides its path ids: query parameters and a body in one of the
// documented media types. Turns those into wire form, and back into what a schema sees (forms and query strings
// are text: integers and booleans are read the way the schema types them).

import type { Operation, Parameter, Schema } from '../../server/spec-model.js';
import { typesOf } from './schema.js';
import { schemaErrors } from './validator.js';

export const FORM = 'application/x-www-form-urlencoded';
export const JSON_TYPE = 'application/json';

export interface Input {
  query: Record<string, unknown>;
  /** Absent: no body is sent. */
  body?: { mediaType: string; value: unknown };
}

/** The body on the wire: a content type (none when omitted) and the text. */
export interface WireBody {
  contentType?: string;
  text: string;
}

export function carrierOf(mediaType: string): 'json' | 'form' {
  return mediaType === FORM ? 'form' : 'json';
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** One field as text; an object (the spec's deepObject: metadata) as one `name[key]` field per key. */
function appendField(params: URLSearchParams, name: string, value: unknown): void {
  if (value === undefined) return;
  if (isObject(value)) {
    for (const [key, inner] of Object.entries(value)) appendField(params, `${name}[${key}]`, inner);
    return;
  }
  params.append(name, stringify(value));
}

export function encodeQuery(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) appendField(params, name, value);
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function encodeBody(mediaType: string, value: unknown): WireBody {
  if (carrierOf(mediaType) === 'json') return { contentType: mediaType, text: JSON.stringify(value) };
  const form = new URLSearchParams();
  for (const [name, field] of Object.entries((value ?? {}) as Record<string, unknown>)) appendField(form, name, field);
  return { contentType: mediaType, text: form.toString() };
}

/** A text value read as the schema types it: "3" is 3 where only integers are allowed. */
export function readText(schema: Schema, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const types = typesOf(schema, 'form');
  if (types.includes('string')) return value;
  if ((types.includes('integer') || types.includes('number')) && /^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  if (types.includes('boolean') && (value === 'true' || value === 'false')) return value === 'true';
  return value;
}

/** Undefined when every query parameter and the body match the spec; otherwise what does not. */
export function inputErrors(operation: Operation, input: Input): string | undefined {
  const errors: string[] = [];
  for (const param of operation.queryParams) {
    const value = input.query[param.name];
    if (value === undefined) {
      if (param.required) errors.push(`query ${param.name} is required`);
      continue;
    }
    const problem = schemaErrors(
      param.schema,
      isObject(value) ? asText(value) : readText(param.schema, stringify(value)),
    );
    if (problem) errors.push(`query ${param.name}${problem}`);
  }
  const known = new Set(operation.queryParams.map((p: Parameter) => p.name));
  for (const name of Object.keys(input.query)) if (!known.has(name)) errors.push(`query ${name} is not a parameter`);
  const body = operation.body;
  if (!input.body) {
    if (body?.required) errors.push('the body is required');
  } else {
    const schema = body?.content[input.body.mediaType];
    if (!schema) errors.push(`media type ${input.body.mediaType} is not documented`);
    else {
      const value = carrierOf(input.body.mediaType) === 'form' ? readForm(schema, input.body.value) : input.body.value;
      const problem = schemaErrors(schema, value);
      if (problem) errors.push(`body${problem}`);
    }
  }
  return errors.length ? errors.join('; ') : undefined;
}

function stringify(value: unknown): string {
  return value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** An object's values as a query string or a form carries them: text. */
function asText(value: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, stringify(inner)]));
}

function readForm(schema: Schema, value: unknown): unknown {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  return Object.fromEntries(
    Object.entries((value ?? {}) as Record<string, unknown>).map(([name, field]) => {
      if (isObject(field)) return [name, asText(field)];
      const text = stringify(field);
      return [name, properties[name] ? readText(properties[name], text) : text];
    }),
  );
}
