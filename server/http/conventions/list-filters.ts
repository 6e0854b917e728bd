// A list's filter parameters that take one value or several comma-separated (`status=pending,misconfigured`):
// read into the values a repository filters on, an unknown value refused with a 422 naming the parameter.
import { metadataOfQuery } from '../../metadata/rules.js';
import { type FieldError, validationProblem } from '../problems/problem.js';

/** The values of `parameter` as sent (undefined when it was not), or the error naming it. */
export function oneOrMoreOf(
  parameter: string,
  sent: string | undefined,
  allowed: readonly string[],
): { values: string[] | undefined } | { error: FieldError } {
  if (sent === undefined) return { values: undefined };
  const values = [...new Set(sent.split(','))];
  if (values.every((value) => allowed.includes(value))) return { values };
  return { error: { location: 'query', field: parameter, message: commaListMessage(allowed, sent) } };
}

/** The values of each parameter, or one 422 naming every parameter with an unknown value. */
export function commaFilters<P extends string>(
  parameters: Record<P, { sent: string | undefined; allowed: readonly string[] }>,
): Record<P, string[] | undefined> {
  const errors: FieldError[] = [];
  const read = {} as Record<P, string[] | undefined>;
  for (const [parameter, { sent, allowed }] of Object.entries(parameters) as Array<
    [P, { sent: string | undefined; allowed: readonly string[] }]
  >) {
    const result = oneOrMoreOf(parameter, sent, allowed);
    if ('error' in result) errors.push(result.error);
    else read[parameter] = result.values;
  }
  if (errors.length > 0) throw validationProblem(errors);
  return read;
}

/** A list's `metadata[key]=value` parameters as sent (the validation step has checked each key and value). */
export function metadataFilter(sent: Record<string, string>): Array<[string, string]> {
  return metadataOfQuery(sent).map(([key, value]) => [key, String(value)]);
}

/** A comma-separated list with values outside `values`: which are allowed, and which of those sent are not. */
export function commaListMessage(values: readonly string[], sent: unknown): string {
  const unknown = typeof sent === 'string' ? [...new Set(sent.split(','))].filter((v) => !values.includes(v)) : [];
  const shown = unknown.slice(0, 3).map((v) => `"${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`);
  const which = shown.length > 0 ? ` (${shown.join(', ')} ${unknown.length > 1 ? 'are' : 'is'} not one)` : '';
  return `must be one or more of ${values.join(', ')}, separated by commas${which}`;
}
