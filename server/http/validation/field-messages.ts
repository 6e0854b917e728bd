// The words of a 422: what each field error tells the client, in our own terms and naming what is allowed
// ("must be one of 10, 25, 50, 100", "must not be empty"). Built from structured data only: the schema keyword
// that failed, the field's schema as the spec model reads it (its format, pattern, enum, limits) and the value
// sent; never from a validator's message text, which is no API.

import { commaListValues, type FieldFormat, MAX_FORMAT_INPUT, PATTERN_MESSAGES } from '../../formats.js';
import type { Schema } from '../../spec-model.js';
import { commaListMessage } from '../conventions/list-filters.js';
import { type IntegerRule, integerRuleMessage } from './integers.js';

/** A query parameter the operation does not have. */
export const unknownParameterMessage = (known: string[]) =>
  known.length
    ? `is not a parameter of this operation; known: ${known.join(', ')}`
    : 'is not a parameter of this operation, which takes none';

/** One finding about one field: the schema keyword that failed, the field's schema and the value sent. */
export interface Finding {
  field: string;
  keyword: string;
  /** The field's schema (flattened), where the spec has one for it. */
  schema?: Schema;
  /** The value as the client sent it, when known. */
  value?: unknown;
}

export interface MessageContext {
  formats: Record<string, FieldFormat>;
  /** The fields a body accepts, and the operation's specific words for fields it refuses (x-rejected-fields). */
  acceptedFields?: string[];
  rejectedFields?: Record<string, string>;
  /** The integer rule of the field, when it is an integer. */
  integerRule?: (field: string) => IntegerRule | undefined;
}

const article = (type: string) =>
  type === 'integer' || type === 'object' || type === 'array' ? `an ${type}` : type === 'null' ? 'null' : `a ${type}`;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const listed = (values: unknown[]) =>
  values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value)));

/** Our message for one finding. */
export function messageFor({ keyword, field, schema = {}, value }: Finding, context: MessageContext): string {
  switch (keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties': {
      // Own entries only: a field named "constructor" or "__proto__" must not find Object's.
      const rejected = context.rejectedFields ?? {};
      const specific = Object.hasOwn(rejected, field) ? rejected[field] : undefined;
      return specific ?? `is not a field of this operation; accepted: ${(context.acceptedFields ?? []).join(', ')}`;
    }
    case 'format': {
      const name = typeof schema.format === 'string' ? schema.format : '';
      const format = Object.hasOwn(context.formats, name) ? context.formats[name] : undefined;
      const hint = typeof value === 'string' && value.length <= MAX_FORMAT_INPUT ? format?.hint?.(value) : undefined;
      return hint ?? format?.message ?? `must be a valid ${name || 'value'}`;
    }
    case 'pattern': {
      const pattern = typeof schema.pattern === 'string' ? schema.pattern : '';
      const values = commaListValues(pattern);
      if (values) return commaListMessage(values, value);
      return (
        (Object.hasOwn(PATTERN_MESSAGES, pattern) ? PATTERN_MESSAGES[pattern] : undefined) ??
        `must match the pattern ${pattern}`
      );
    }
    case 'type': {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [String(schema.type ?? 'value')];
      return `must be ${types.map(article).join(' or ')}`;
    }
    case 'enum': {
      const allowed = Array.isArray(schema.enum) ? listed(schema.enum) : [];
      if (allowed.length === 0) return 'must be one of the values the spec lists';
      return allowed.length > 1
        ? `must be one of ${allowed.join(', ')}`
        : `must be ${allowed[0]} (the only value allowed)`;
    }
    case 'const':
      return `must be ${listed([schema.const])[0]} (the only value allowed)`;
    case 'minLength':
      return value === '' ? 'must not be empty' : `must be at least ${plural(Number(schema.minLength), 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(Number(schema.maxLength), 'character')}`;
    case 'minItems':
      return `must have at least ${plural(Number(schema.minItems), 'item')}`;
    case 'maxItems':
      return `must have at most ${plural(Number(schema.maxItems), 'item')}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum': {
      const rule = context.integerRule?.(field);
      if (rule) return integerRuleMessage(rule);
      return keyword.toLowerCase().includes('min')
        ? `must be at least ${schema[keyword]}`
        : `must be at most ${schema[keyword]}`;
    }
    case '':
      // A finding about no field of the request (the request line itself).
      return 'is not valid';
    default:
      return `does not meet the spec's "${keyword}" rule`;
  }
}

/**
 * Our messages for all findings about one field, most telling first. A format states the whole rule, so the
 * length limits and patterns that only restate part of it (for tools that do not know the format) are left
 * out when it failed too; an empty value that is not allowed to be says only that.
 */
export function fieldMessage(findings: Finding[], context: MessageContext): string {
  const keywords = new Set(findings.map((finding) => finding.keyword));
  const empty = findings.some((finding) => finding.value === '') && keywords.has('minLength');
  const kept = findings.filter(({ keyword }) => {
    if (empty) return keyword === 'minLength';
    if (keywords.has('format')) return !['pattern', 'minLength', 'maxLength'].includes(keyword);
    return true;
  });
  return [...new Set(kept.map((finding) => messageFor(finding, context)))].join('; ');
}
