// Conditional requests (RFC 9110 §13): the strong ETag of a record, made of its id and version, and the
// If-Match and If-None-Match headers read against it. The atomic check itself is in the write (db/owned.ts).
import type { ExpectedVersions } from '../../db/owned.js';
import { fieldProblem, type HttpProblem } from '../problems/problem.js';

export { etagOf } from '../../etag.js';

interface EntityTag {
  weak: boolean;
  /** The tag with its quotes, as etagOf writes it. */
  opaque: string;
}

// The tokens of an entity-tag list (RFC 9110 §8.8.3, §5.6.1): a tag, a comma, or white space between them.
const LIST_TOKEN = /(W\/)?("[\x21\x23-\x7E\x80-\xFF]*")|,|[ \t]+/y;

/**
 * The members of an If-Match or If-None-Match list; `*` for the wildcard; undefined when it is not such a list
 * (or names no tag). Tags are separated by commas; empty members are allowed and ignored, as the RFC asks.
 */
function entityTags(header: string): '*' | EntityTag[] | undefined {
  if (header.trim() === '*') return '*';
  const tags: EntityTag[] = [];
  let afterComma = true;
  LIST_TOKEN.lastIndex = 0;
  while (LIST_TOKEN.lastIndex < header.length) {
    const token = LIST_TOKEN.exec(header);
    if (!token) return undefined;
    if (token[2] !== undefined) {
      if (!afterComma) return undefined;
      tags.push({ weak: token[1] !== undefined, opaque: token[2] });
      afterComma = false;
    } else if (token[0] === ',') afterComma = true;
  }
  return tags.length > 0 ? tags : undefined;
}

/**
 * True when If-None-Match names the current ETag (weak comparison, as RFC 9110 §13.1.2 asks: `W/"7.3"`
 * matches `"7.3"`) or is `*`: the client's copy is current, and a GET answers 304.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  // A malformed list names no tag: the GET answers in full, which is always safe.
  const tags = entityTags(header);
  return tags === '*' || (tags?.some((tag) => tag.opaque === etag) ?? false);
}

/**
 * An If-Match header that is not an entity-tag list: `invalid-if-match` naming it. Not a 412, which would tell the
 * client the record changed.
 */
function invalidIfMatch(): HttpProblem {
  return fieldProblem(
    'invalid-if-match',
    [
      {
        location: 'header',
        field: 'If-Match',
        message: 'must be * or a comma-separated list of ETags as the service sends them, quotes included, e.g. "42.3"',
      },
    ],
    'The If-Match header is not * or a list of ETags; nothing was changed.',
  );
}

/**
 * If-Match read once (by the validation step, request-validation.ts): the versions of record `id` it accepts,
 * `any` without the header or for `*`, else those its strong tags name (a weak tag never matches, RFC 9110
 * §13.1.1; an empty list matches no version); or the problem of a header that is not an entity-tag list.
 */
export function readIfMatch(header: string | undefined, id: number): ExpectedVersions | HttpProblem {
  if (header === undefined) return 'any';
  const tags = entityTags(header);
  if (tags === undefined) return invalidIfMatch();
  if (tags === '*') return 'any';
  const prefix = `"${id}.`;
  return tags
    .filter((tag) => !tag.weak && tag.opaque.startsWith(prefix) && /^"\d+\.[1-9]\d{0,14}"$/.test(tag.opaque))
    .map((tag) => Number(tag.opaque.slice(prefix.length, -1)));
}
