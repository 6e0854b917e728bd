// The list envelope's `links` and `meta`, computed from the request and the total count; and the list
// parameters of the spec read into what the repositories take (a page number, or a cursor walk's position).
import type { components } from '../../../generated/api.js';
import type { ListPosition, ListQuery } from '../../db/listing.js';
import { fieldProblem, type HttpProblem } from '../problems/problem.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { ListUrl } from './id-cursor.js';

type Links = components['schemas']['pagination-links'];
type Meta = components['schemas']['pagination-meta'];

/** A list request: the repository's query, and in a cursor walk how many records came before this page. */
export interface ListRequest extends ListQuery {
  walked?: number;
}

export function paginationOf(
  url: ListUrl,
  list: ListRequest,
  result: { total: number; totalExact?: boolean; onPage: number; next?: ListPosition | undefined },
): { links: Links; meta: Meta } {
  const { perPage } = list;
  const { totalExact = true } = result;
  const walk = list.after !== undefined;
  const offset = walk ? (list.walked ?? 0) : (list.page - 1) * perPage;
  // A lower bound (see listing.ts) is at least the records up to this page's end, plus one when more follow.
  const total =
    walk && !totalExact ? Math.max(result.total, offset + result.onPage + (result.next ? 1 : 0)) : result.total;
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const page = walk ? Math.floor(offset / perPage) + 1 : list.page;
  const onPage = walk || !totalExact ? result.onPage : Math.max(0, Math.min(perPage, total - offset));
  const { page: _page, after: _after, ...kept } = url.sent;
  // encodeURIComponent rather than URLSearchParams: a space is %20, not a "+" that could be read literally.
  const link = (parameters: Record<string, string>) => {
    const query = Object.entries(parameters)
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    return `${url.path}?${query}`;
  };
  const pageLink = (target: number) =>
    link(walk ? { ...kept, page: String(target) } : { ...url.sent, page: String(target) });
  const cursorLink = (after: string) => link({ ...kept, after });
  let next: string | null;
  if (walk) {
    next = result.next
      ? cursorLink(url.seal(encodeCursor(list, { walked: offset + onPage, position: result.next })))
      : null;
  } else {
    next = page < lastPage ? pageLink(page + 1) : null;
  }
  return {
    links: {
      first: walk ? cursorLink('') : pageLink(1),
      last: pageLink(lastPage),
      // Past the end, prev leads back to the last page that has records.
      prev: page > 1 ? pageLink(Math.min(page - 1, lastPage)) : null,
      next,
    },
    meta: {
      current_page: page,
      last_page: lastPage,
      per_page: perPage as Meta['per_page'],
      total,
      // Only when false: an exact total (every list but a search of very many matches) answers as before.
      ...(totalExact ? {} : { total_exact: false }),
      from: onPage > 0 ? offset + 1 : null,
      to: onPage > 0 ? offset + onPage : null,
    },
  };
}

/**
 * `page` and `after` sent together: `page-with-cursor` naming both (the validation step checks it,
 * request-validation.ts). `sent` is the query as sent, before defaults were filled in.
 */
export function pageWithCursorProblem(sent: Record<string, unknown>): HttpProblem | undefined {
  if (!Object.hasOwn(sent, 'page') || !Object.hasOwn(sent, 'after')) return undefined;
  const message =
    'cannot be combined with the other: send page to ask for a page by number, or after to walk by cursor';
  return fieldProblem(
    'page-with-cursor',
    [
      { location: 'query', field: 'page', message },
      { location: 'query', field: 'after', message },
    ],
    'Send page or after, not both.',
  );
}

/** The list parameters of the spec, as the repositories take them (the validation step has refused a bad cursor). */
export function listQueryOf(
  query: {
    search: string;
    sort_by: 'id' | 'name';
    sort: 'asc' | 'desc';
    per_page: number;
    page: number;
    after?: string | undefined;
  },
  sent: Record<string, string> = {},
): ListRequest {
  const list: ListRequest = {
    search: query.search,
    sortBy: query.sort_by,
    sort: query.sort,
    perPage: query.per_page,
    page: query.page,
  };
  if (query.after === undefined) return list;
  const refused = pageWithCursorProblem(sent);
  if (refused) throw refused;
  if (query.after === '') return { ...list, after: 'start', walked: 0 };
  const { walked, position } = decodeCursor(query.after, list);
  return { ...list, after: position, walked };
}
