// The cursor of the lists read newest first by id alone (events, delivery attempts): the last id of a page and a
// digest of the list it walks (its path and filters), and the link to the next page with the parameters the client
// sent, the cursor sealed in it as every cursor is (cursor.ts).
import { hash } from 'node:crypto';
import type { FieldFormat } from '../../formats.js';
import { fieldProblem, type HttpProblem } from '../problems/problem.js';
import type { Seal } from './cursor.js';

/** The spec's `id-cursor` format: what such a cursor can look like; whether it is one of ours, idCursorProblem says. */
export const idCursorFormats: Record<string, FieldFormat> = {
  'id-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]{0,128}$/.test(value),
    message: 'must be a cursor from links.next (letters, digits, - and _), or empty to start',
  },
};

/** The parameters that page a walk rather than choose what it walks: they may change between its pages. */
const PAGING = new Set(['after', 'per_page']);

/**
 * What a walk walks, in a few characters: the list's path and its filters (every parameter sent but the cursor
 * and the page size), so that a cursor followed with other filters or on another list is refused, not misread.
 */
function walkOf(path: string, sent: Record<string, string>): string {
  const filters = Object.entries(sent)
    .filter(([name]) => !PAGING.has(name))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // The digest's first 6 bytes: its first 8 base64url characters.
  return hash('sha256', JSON.stringify([path, filters]), 'base64url').slice(0, 8);
}

/** The cursor (before sealing) after the record `id` of the walk of `path` with `sent`'s filters. */
export function idCursor(id: number, path: string, sent: Record<string, string>): string {
  return `${walkOf(path, sent)}${id}`;
}

/** A cursor as opened: the walk's digest (8 characters), then the id. */
const CURSOR = /^([A-Za-z0-9_-]{8})([1-9]\d{0,15})$/;

/** The id a cursor (as opened) stands for; undefined for none, NaN for one this service did not make. */
function idOf(cursor: string | undefined): number | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  const id = CURSOR.exec(cursor)?.[2];
  return id !== undefined && Number.isSafeInteger(Number(id)) ? Number(id) : Number.NaN;
}

const problemOf = (message: string) =>
  fieldProblem(
    'invalid-cursor',
    [{ location: 'query', field: 'after', message }],
    'The cursor in after is not one this service made for this list.',
  );

/**
 * Why the opened cursor cannot continue the walk of `path` with `sent`'s filters: not made here (or changed), or
 * made for another list or other filters. Undefined when it can (or when none was sent). The validation step
 * asks, before any handler.
 */
export function idCursorProblem(
  cursor: string | undefined,
  path: string,
  sent: Record<string, string>,
): HttpProblem | undefined {
  const id = idOf(cursor);
  if (id === undefined) return undefined;
  if (Number.isNaN(id)) return problemOf('is not a cursor of this list: take it from links.next');
  if (CURSOR.exec(cursor as string)?.[1] !== walkOf(path, sent)) {
    return problemOf(
      'belongs to a walk of another list or with other filters: send the parameters of the links.next it came from',
    );
  }
  return undefined;
}

/** The id an opened cursor stands for (one the validation step let through); undefined for none. */
export function readIdCursor(cursor: string | undefined): number | undefined {
  const id = idOf(cursor);
  if (Number.isNaN(id)) throw problemOf('is not a cursor of this list: take it from links.next');
  return id;
}

/** Where a list's links lead: its path, the parameters the client sent, and the seal of the cursors in them. */
export interface ListUrl {
  path: string;
  sent: Record<string, string>;
  seal: Seal;
}

/**
 * `links.next`: the same path and parameters, `after` the cursor after the last record of a full page, sealed;
 * null after the last page.
 */
export function nextLink({ path, sent, seal }: ListUrl, page: Array<{ id: number }>, perPage: number): string | null {
  const last = page.at(-1);
  if (page.length < perPage || last === undefined) return null;
  const query = new URLSearchParams({ ...sent, after: seal(idCursor(last.id, path, sent)) });
  return `${path}?${query}`;
}
