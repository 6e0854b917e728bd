// Text that a command prints to a terminal from stored values: control characters (terminal escapes, a line
// break that forges a table row, bidi overrides that reorder it; CWE-150) are refused on the way in and shown
// escaped on the way out, so a stored value prints as one visible cell whatever it holds.

// C0 and C1 controls, DEL, and the Unicode bidi controls (embeddings, overrides, isolates, marks).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/**
 * What a name may not hold besides: characters that print as nothing or as a space, so that two names would print
 * alike: every format character (zero-width space, joiners, soft hyphen, BOM, tags), line and paragraph
 * separators (U+2028, U+2029), spaces other than U+0020, unpaired surrogates, private-use and unassigned code
 * points, and the blank letters (Hangul fillers, the blank Braille pattern, the combining grapheme joiner).
 */
const INVISIBLE = /[\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u115f\u1160\u2800\u3164\uffa0]|\u034f|(?! )\p{Zs}/u;
const SHOWN_ESCAPED = new RegExp(`${CONTROL.source}|${INVISIBLE.source}`, 'gu');

/** The longest account name or label, in characters: `list` prints each in a column. */
export const MAX_NAME_LENGTH = 100;

/** The first control character of a value, escaped, or undefined when it has none. */
export function controlCharacterIn(value: string): string | undefined {
  const found = CONTROL.exec(value)?.[0];
  return found === undefined ? undefined : escapeCode(found);
}

function escapeCode(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * A stored value as it is safe to print: a backslash doubled, every control or invisible character as \xNN or
 * \uNNNN (so that a name stored before the rule prints visibly).
 */
export function printable(value: string): string {
  return value.replaceAll('\\', '\\\\').replace(SHOWN_ESCAPED, escapeCode);
}

/**
 * Why a name (an account name, a key's label) is refused, or undefined: a control character, one that prints as
 * nothing or as a space, a spelling other than Unicode's composed form (NFC: "é" one way only), or a length over
 * MAX_NAME_LENGTH. So no two names print alike, and `list` stays small.
 */
export function nameProblem(value: string): string | undefined {
  const control = controlCharacterIn(value);
  if (control) return `must not hold control characters (it has ${control})`;
  // What Node makes of bytes that are not UTF-8 in an argument: the name that was meant is not known.
  if (value.includes('\ufffd')) return 'must be valid UTF-8 text (it has \\ufffd, which stands for bytes that are not)';
  const invisible = INVISIBLE.exec(value)?.[0];
  if (invisible !== undefined) {
    return `must not hold invisible, space-like or line-separator characters (it has ${escapeCode(invisible)})`;
  }
  if (value !== value.normalize('NFC')) return 'must be written in composed form (Unicode NFC)';
  const length = [...value].length;
  if (length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters (it has ${length})`;
  return undefined;
}

/** Rows as aligned columns, two spaces apart; the cells must be printable already. */
export function table(rows: string[][]): string[] {
  return rows.map((row) =>
    row
      .map((cell, i) => cell.padEnd(Math.max(...rows.map((r) => r[i]?.length ?? 0))))
      .join('  ')
      .trimEnd(),
  );
}
