// Integers sent as text (path ids, page numbers, form fields): their one accepted spelling and their range,
// judged on the text before anything turns them into numbers.

import { integerRuleMessage, NOT_PLAIN_INTEGER } from './field-messages.js';
import type { IntegerBounds } from './routes.js';

/** An integer as text in its one plain spelling: decimal digits, an optional minus, no leading zeros. */
const PLAIN_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const MAX_INTEGER_TEXT = 20;

/**
 * Why an integer written in plain decimal is outside its schema's range, compared as text (BigInt), never
 * as a number: 400 nines would become Infinity, and 2^53 + 1 would round to a neighbour.
 */
function outOfRange(text: string, bounds: IntegerBounds): string | undefined {
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
export function integerParameterProblem(text: string, bounds: IntegerBounds): string | undefined {
  return PLAIN_INTEGER.test(text) ? outOfRange(text, bounds) : NOT_PLAIN_INTEGER;
}

/**
 * A form field the spec types as an integer (form values are text): its number when plainly spelled and in
 * range; else the text stays, for the validator to refuse as text ("03", "+3"), with the range as the
 * message when that is what is wrong.
 */
export function readFormInteger(text: string, bounds: IntegerBounds): { value: number } | { problem?: string } {
  if (!PLAIN_INTEGER.test(text)) return {};
  const problem = outOfRange(text, bounds);
  return problem ? { problem } : { value: Number(text) };
}
