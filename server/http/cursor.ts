// The opaque `after` cursor of a list walk: the sort it belongs to, how many records the walk has returned,
// and the sort key of the last one. base64url of a small JSON array; a client never needs to read it.
import type { ListPosition, ListQuery } from '../db/listing.js';
import type { FieldFormat } from '../formats.js';
import { validationProblem } from './problem.js';

export interface WalkPoint {
  /** Records the walk returned before this point. */
  walked: number;
  position: ListPosition;
}

type Sorting = Pick<ListQuery, 'sortBy' | 'sort'>;

/** The spec's `list-cursor` format: what a cursor can look like; whether it is one of ours, decodeCursor says. */
export const cursorFormats: Record<string, FieldFormat> = {
  'list-cursor': {
    validate: (value) => /^[A-Za-z0-9_-]*$/.test(value),
    message: 'must be a cursor from links.next (letters, digits, - and _), or empty to start a walk',
  },
};

export function encodeCursor(sorting: Sorting, point: WalkPoint): string {
  const { id, nameKey } = point.position;
  const fields = [sorting.sortBy, sorting.sort, point.walked, id, ...(sorting.sortBy === 'name' ? [nameKey] : [])];
  return Buffer.from(JSON.stringify(fields)).toString('base64url');
}

const invalid = (message: string) => validationProblem([{ location: 'query', field: 'after', message }]);

/** The walk point of a cursor sent with `sorting`; a 422 naming `after` when it is not one of ours or not for this sort. */
export function decodeCursor(cursor: string, sorting: Sorting): WalkPoint {
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    fields = undefined;
  }
  const [sortBy, sort, walked, id, nameKey] = Array.isArray(fields) ? fields : [];
  const byName = sortBy === 'name';
  const wellFormed =
    (sortBy === 'id' || byName) &&
    (sort === 'asc' || sort === 'desc') &&
    Number.isSafeInteger(walked) &&
    walked >= 0 &&
    Number.isSafeInteger(id) &&
    id >= 1 &&
    (byName ? typeof nameKey === 'string' : nameKey === undefined) &&
    (fields as unknown[]).length === (byName ? 5 : 4);
  if (!wellFormed)
    throw invalid('is not a cursor this service made: take it from links.next, or send it empty to start');
  if (sortBy !== sorting.sortBy || sort !== sorting.sort) {
    throw invalid(`belongs to a walk with sort_by=${sortBy}&sort=${sort}; send the same sort_by and sort`);
  }
  return { walked, position: { id, nameKey: byName ? nameKey : '' } };
}
