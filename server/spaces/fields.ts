// Field rules of spaces: names.
import { type FieldFormat, wellFormed } from '../formats.js';

export const SPACE_NAME_MAX = 255;

/** A space name as stored: trimmed. Valid when 1–255 characters remain and none is a control character. */
export function isSpaceName(value: string): boolean {
  const trimmed = value.trim();
  const length = [...trimmed].length;
  return length >= 1 && length <= SPACE_NAME_MAX && !/\p{Cc}/u.test(trimmed);
}

export const spaceFormats: Record<string, FieldFormat> = {
  'space-name': {
    validate: wellFormed(isSpaceName),
    message: `must be 1–${SPACE_NAME_MAX} characters after trimming white space, with no control characters`,
  },
};
