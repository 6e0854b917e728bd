// Where two JSON values differ, field by field, so a failure can say which fields changed (expected vs got)
// rather than only that something did.

export interface Difference {
  /** A dotted path into the value, e.g. "data.name" or "data.tags[0]"; "" for the value itself. */
  path: string;
  expected: unknown;
  got: unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

export function differences(expected: unknown, got: unknown, path = ''): Difference[] {
  if (isObject(expected) && isObject(got)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(got)])];
    return keys.flatMap((key) => differences(expected[key], got[key], path ? `${path}.${key}` : key));
  }
  if (Array.isArray(expected) && Array.isArray(got) && expected.length === got.length) {
    return expected.flatMap((item, i) => differences(item, got[i], `${path}[${i}]`));
  }
  return JSON.stringify(expected) === JSON.stringify(got) ? [] : [{ path, expected, got }];
}

/**
 * The top-level fields of a create's answer that a read documents (its 200 JSON schema's properties): a create
 * may answer more than any read shows again (a webhook endpoint's secret, shown once), which is no difference.
 */
export function asDocumented(value: unknown, readSchema: Record<string, unknown> | undefined): unknown {
  const properties = readSchema?.properties as Record<string, unknown> | undefined;
  if (!isObject(value) || !properties) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => key in properties));
}

const show = (value: unknown) => (value === undefined ? '(absent)' : JSON.stringify(value));

/** The differing fields' names, for a failure message that is the same for every record showing the fault. */
export function fieldsOf(found: Difference[]): string {
  return found.map((d) => d.path || '(the whole body)').join(', ');
}

/** One line per differing field with both values, at most `limit` of them. */
export function describeDifferences(found: Difference[], limit = 8): string {
  const lines = found
    .slice(0, limit)
    .map((d) => `${d.path || '(the whole body)'}: expected ${show(d.expected)}, got ${show(d.got)}`);
  if (found.length > limit) lines.push(`… and ${found.length - limit} more`);
  return lines.join('\n');
}
