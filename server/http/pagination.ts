// The list envelope's `links` and `meta`, computed from the request and the total count.
import type { components } from '../../generated/api.js';
import type { ListQuery } from '../db/listing.js';

type Links = components['schemas']['pagination-links'];
type Meta = components['schemas']['pagination-meta'];

export function paginationOf(
  url: { path: string; sent: Record<string, string> },
  page: number,
  perPage: number,
  total: number,
): { links: Links; meta: Meta } {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const offset = (page - 1) * perPage;
  const onPage = Math.max(0, Math.min(perPage, total - offset));
  // encodeURIComponent rather than URLSearchParams: a space is %20, not a "+" that could be read literally.
  const link = (target: number) => {
    const query = Object.entries({ ...url.sent, page: String(target) })
      .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
      .join('&');
    return `${url.path}?${query}`;
  };
  return {
    links: {
      first: link(1),
      last: link(lastPage),
      // Past the end, prev leads back to the last page that has records.
      prev: page > 1 ? link(Math.min(page - 1, lastPage)) : null,
      next: page < lastPage ? link(page + 1) : null,
    },
    meta: {
      current_page: page,
      last_page: lastPage,
      per_page: perPage as Meta['per_page'],
      total,
      from: onPage > 0 ? offset + 1 : null,
      to: onPage > 0 ? offset + onPage : null,
    },
  };
}

/** The list parameters of the spec, as the repositories take them. */
export function listQueryOf(query: {
  search: string;
  sort_by: 'id' | 'name';
  sort: 'asc' | 'desc';
  per_page: number;
  page: number;
}): ListQuery {
  return { search: query.search, sortBy: query.sort_by, sort: query.sort, perPage: query.per_page, page: query.page };
}
