// Name and colour cases shared by the store and update tests of spaces.
/** Names that are accepted, with the name as stored: trimmed, otherwise exactly as sent. */
export const ACCEPTED_NAMES = [
  { label: 'a plain name', sent: 'Marketing', stored: 'Marketing' },
  { label: 'spaces around it', sent: '  Marketing  ', stored: 'Marketing' },
  { label: 'a tab and newline around it', sent: '\t Marketing\n', stored: 'Marketing' },
  { label: 'inner spaces kept', sent: 'Sales  and  Marketing', stored: 'Sales  and  Marketing' },
  { label: 'a single character', sent: 'x', stored: 'x' },
  { label: '255 characters', sent: 'a'.repeat(255), stored: 'a'.repeat(255) },
  { label: '255 characters within 259 raw', sent: `  ${'b'.repeat(255)}  `, stored: 'b'.repeat(255) },
  { label: '255 emoji (510 UTF-16 units)', sent: '🚀'.repeat(255), stored: '🚀'.repeat(255) },
  { label: 'an emoji', sent: '🚀 Launch', stored: '🚀 Launch' },
  { label: 'umlauts', sent: 'ärger', stored: 'ärger' },
  { label: 'capital umlauts', sent: 'ÄRGER im Büro', stored: 'ÄRGER im Büro' },
  { label: 'CJK', sent: '日本語のスペース', stored: '日本語のスペース' },
  { label: 'a combining accent', sent: 'Cafe\u0301', stored: 'Cafe\u0301' },
  { label: 'punctuation', sent: '100% <fun> & "games" \\ _', stored: '100% <fun> & "games" \\ _' },
];

/** Names that are rejected with 422 naming `name`. */
export const REJECTED_NAMES = [
  { label: 'empty', sent: '' },
  { label: 'only spaces', sent: '     ' },
  { label: 'only tabs and newlines', sent: ' \t\n ' },
  { label: '256 characters', sent: 'a'.repeat(256) },
  { label: '256 characters after trimming', sent: `  ${'a'.repeat(256)}  ` },
  { label: 'a NUL inside', sent: 'Mar\u0000keting' },
  { label: 'a BEL inside', sent: 'Mar\u0007keting' },
  { label: 'a newline inside', sent: 'Mar\nketing' },
  { label: 'a tab inside', sent: 'Mar\tketing' },
  { label: 'a DEL inside', sent: 'Mar\u007fketing' },
];

/**
 * Colour values as sent in a form, i.e. as text, that are not an integer from 1 to 6. Only the plain decimal
 * spelling is read as an integer: '03', '+3' and ' 3' are refused like 'abc'.
 */
// Not '': a form field left blank counts as not sent (test/http/field-messages.test.ts).
export const REJECTED_FORM_COLORS = ['0', '7', '-1', '2.5', 'abc', '03', '+3', ' 3', '3e0'];

/** Colour values in JSON that are not an integer from 1 to 6; JSON is taken as typed, so "3" is wrong too. */
export const REJECTED_JSON_COLORS: unknown[] = [0, 7, -1, 2.5, '3', '', 'abc', null, true];
