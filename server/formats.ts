// A custom string format of the spec: how to check a value, and what to tell a client whose value fails.
export interface FieldFormat {
  validate(value: string): boolean;
  message: string;
  /** A message for this value, when a more precise one than `message` applies (e.g. "drop the scheme"). */
  hint?(value: string): string | undefined;
}

/**
 * No format is checked on a longer value (and no hint is looked for): every field's maxLength is below this, so
 * such a value is refused anyway, and no format's check then reads more than this many characters.
 */
export const MAX_FORMAT_INPUT = 4096;

/** What to tell a client whose value fails a `pattern` of the spec, by the pattern. */
export const PATTERN_MESSAGES: Record<string, string> = {
  '^[^\\u0000-\\u001F\\u007F-\\u009F]*$': 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
};

/**
 * The values of a pattern that lists one or more of them, comma-separated (`^(a|b)(,(a|b))*$`: the list filters
 * `status` and `routing`); undefined for any other pattern.
 */
export function commaListValues(pattern: string): string[] | undefined {
  const match = /^\^\(([\w|]+)\)\(,\(([\w|]+)\)\)\*\$$/.exec(pattern);
  if (!match || match[1] !== match[2]) return undefined;
  return match[1]?.split('|');
}

/**
 * Only text that is valid Unicode can be stored as it was sent: JSON can carry lone UTF-16 surrogates
 * ("\ud800"), which would come back from the database as replacement characters.
 */
export function wellFormed(validate: (value: string) => boolean): (value: string) => boolean {
  return (value) => value.isWellFormed() && validate(value);
}
