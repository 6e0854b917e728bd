// A 404 for a path that is almost right says which path was meant: the API path without its /api/v1 prefix, or
// with a trailing slash.
import type { RouteTable } from './routes.js';

/** " Did you mean …?" for a path of the spec that the one given nearly is; "" when there is none. */
export function pathHint(routes: RouteTable, base: string, path: string): string {
  const trimmed = withoutTrailingSlashes(path);
  const slash = trimmed !== path;
  const candidates = [trimmed, ...(trimmed.startsWith(`${base}/`) ? [] : [`${base}${trimmed}`])];
  const meant = candidates.find(
    (candidate) =>
      candidate !== path && candidate.startsWith(`${base}/`) && routes.hasPath(candidate.slice(base.length)),
  );
  if (!meant) return '';
  return slash && meant === trimmed
    ? ` Did you mean ${meant}, without the trailing slash?`
    : ` Did you mean ${meant}? The API's paths start with ${base}.`;
}

/** The path without its trailing slashes (one pass from the end: a regex anchored at the end retries at every slash). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === '/') end--;
  return path.slice(0, end);
}
