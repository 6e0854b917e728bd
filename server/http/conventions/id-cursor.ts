// The cursor of the lists read newest first by id alone (events, delivery attempts): the last id of a page,
// opaque to clients, and the link to the next page with the parameters the client sent.
import type { FieldFormat } from '../../formats.js';
import { fieldProblem, type HttpProblem } from '../problems/problem.js';

/** The spec's `id-cursor` format: what such a cursor can look like; whether it is one of ours, readIdCursor says. */
export const idCursorFormats: Record<string, FieldFormat> = {
  'id-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]{0,64}$/.test(value),
    message: 'must be a cursor from links.next (letters, digits, - and _), or empty to start',
  },
};

export function idCursor(id: number): string {
  return Buffer.from(String(id)).toString('base64url');
}

/** The id a cursor stands for; undefined for none, NaN for one this service did not make. */
function idOf(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return /^[1-9]\d{0,15}$/.test(text) && idCursor(Number(text)) === cursor ? Number(text) : Number.NaN;
}

/** A cursor this service did not make: `invalid-cursor` naming `after` (the validation step checks it). */
export function idCursorProblem(cursor: string | undefined): HttpProblem | undefined {
  if (!Number.isNaN(idOf(cursor))) return undefined;
  return fieldProblem(
    'invalid-cursor',
    [{ location: 'query', field: 'after', message: 'is not a cursor of this list: take it from links.next' }],
    'The cursor in after is not one this service made.',
  );
}

/** The id a cursor stands for (idCursorProblem's problem thrown for one this service did not make). */
export function readIdCursor(cursor: string | undefined): number | undefined {
  const id = idOf(cursor);
  if (Number.isNaN(id)) throw idCursorProblem(cursor);
  return id;
}

/** `links.next`: the same path and parameters, `after` the last id of a full page; null after the last page. */
export function nextLink(
  path: string,
  sent: Record<string, string>,
  page: Array<{ id: number }>,
  perPage: number,
): string | null {
  const last = page.at(-1);
  if (page.length < perPage || last === undefined) return null;
  const query = new URLSearchParams({ ...sent, after: idCursor(last.id) });
  return `${path}?${query}`;
}
