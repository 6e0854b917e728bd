// Integers sent as text (path ids, page numbers, form fields): their one accepted spelling and their range,
// judged on the text before anything turns them into numbers.
import type { Schema } from '../../spec-model.js';

/** An integer's rule as its schema states it: its range, and the spec's `enum` when only some values are allowed. */
export interface IntegerRule {
  minimum?: number;
  maximum?: number;
  /** The spec's `enum`, when only some values of the range are allowed. */
  allowed?: number[];
}

/** What is wrong with an integer outside its rule (the value itself is not repeated). */
export function integerRuleMessage({ minimum, maximum, allowed }: IntegerRule): string {
  if (allowed?.length) return `must be one of ${allowed.join(', ')}`;
  if (minimum !== undefined && maximum !== undefined) return `must be an integer from ${minimum} to ${maximum}`;
  if (minimum !== undefined) return `must be an integer of at least ${minimum}`;
  if (maximum !== undefined) return `must be an integer of at most ${maximum}`;
  return `must be an integer from ${Number.MIN_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`;
}

/** The rule of a flattened integer schema (no range where it states none). */
export function integerRuleOf(schema: Schema): IntegerRule {
  const pick = (key: 'minimum' | 'maximum') => (typeof schema[key] === 'number' ? (schema[key] as number) : undefined);
  const allowed = Array.isArray(schema.enum) ? (schema.enum as unknown[]).filter((v) => typeof v === 'number') : [];
  return { minimum: pick('minimum'), maximum: pick('maximum'), ...(allowed.length ? { allowed } : {}) };
}

const NOT_PLAIN_INTEGER = 'must be an integer written in plain decimal digits';

/** An integer as text in its one plain spelling: decimal digits, an optional minus, no leading zeros. */
const PLAIN_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const MAX_INTEGER_TEXT = 20;

/**
 * Why an integer written in plain decimal is outside its schema's range, compared as text (BigInt), never
 * as a number: 400 nines would become Infinity, and 2^53 + 1 would round to a neighbour.
 */
function outOfRange(text: string, bounds: IntegerRule): string | undefined {
  // Past any safe integer by its length alone: BigInt need not read thousands of digits to say so.
  const value = text.length > MAX_INTEGER_TEXT ? (text.startsWith('-') ? -1n : 1n) * 10n ** 20n : BigInt(text);
  const { minimum, maximum, allowed } = bounds;
  // A schema without a maximum still cannot take what a number cannot hold exactly.
  const tooLarge = value > BigInt(maximum ?? Number.MAX_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER);
  const tooSmall = value < BigInt(minimum ?? Number.MIN_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER);
  const listed = !allowed || allowed.some((each) => BigInt(each) === value);
  if (!tooLarge && !tooSmall && listed) return undefined;
  return integerRuleMessage({
    minimum: minimum ?? Number.MIN_SAFE_INTEGER,
    maximum: maximum ?? Number.MAX_SAFE_INTEGER,
    ...(allowed ? { allowed } : {}),
  });
}

/**
 * A path or query integer as sent: what is wrong with it, if anything. The validator would coerce "1e3",
 * "+1", "01", "1.0" and " 1"; an id or a page number has one spelling.
 */
export function integerParameterProblem(text: string, bounds: IntegerRule): string | undefined {
  return PLAIN_INTEGER.test(text) ? outOfRange(text, bounds) : NOT_PLAIN_INTEGER;
}

/**
 * A form field the spec types as an integer (form values are text): its number when plainly spelled and in
 * range; else the text stays, for the validator to refuse as text ("03", "+3"), with the range as the
 * message when that is what is wrong.
 */
export function readFormInteger(text: string, bounds: IntegerRule): { value: number } | { problem?: string } {
  if (!PLAIN_INTEGER.test(text)) return {};
  const problem = outOfRange(text, bounds);
  return problem ? { problem } : { value: Number(text) };
}
