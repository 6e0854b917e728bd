// Text that a command prints to a terminal from stored values: control characters (terminal escapes, a line
// break that forges a table row, bidi overrides that reorder it; CWE-150) are refused on the way in and shown
// escaped on the way out, so a stored value prints as one visible cell whatever it holds.

// C0 and C1 controls, DEL, and the Unicode bidi controls (embeddings, overrides, isolates, marks).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is this pattern's purpose.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const CONTROLS = new RegExp(CONTROL.source, 'gu');

/** The first control character of a value, escaped, or undefined when it has none. */
export function controlCharacterIn(value: string): string | undefined {
  const found = CONTROL.exec(value)?.[0];
  return found === undefined ? undefined : escapeCode(found);
}

function escapeCode(character: string): string {
  const code = character.codePointAt(0) ?? 0;
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A stored value as it is safe to print: a backslash doubled, every control character as \xNN or \uNNNN. */
export function printable(value: string): string {
  return value.replaceAll('\\', '\\\\').replace(CONTROLS, escapeCode);
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
