// HTTP handlers of the space operations: map validated input, by the space rules (rules.ts), to the repository
// and records to replies.

import { etagOf, noneMatch } from '../http/conventions/conditional.js';
import { metadataFilter } from '../http/conventions/list-filters.js';
import { withinMetadataLimit } from '../http/conventions/metadata-limit.js';
import { listQueryOf, paginationOf } from '../http/conventions/pagination.js';
import { notFound } from '../http/problems/problem.js';
import type { Handler, Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import type { SpaceRepository } from './repository.js';
import { spaceChangesOf, storeSpace } from './rules.js';

export type SpaceOperation =
  | 'spaces_list'
  | 'spaces_show'
  | 'spaces_store'
  | 'spaces_update'
  | 'spaces_patch'
  | 'spaces_delete';
type SpaceHandlers = Pick<Handlers, SpaceOperation>;

export function spaceHandlers(spaces: SpaceRepository): SpaceHandlers {
  const update: Handler<'spaces_update'> = async ({ account, path, expected, body, requestId, actor }) => {
    const changes = spaceChangesOf(body);
    const space = await withinMetadataLimit(() =>
      spaces.update(account.id, path.id, changes, expected, causeOf(requestId, actor)),
    );
    if (!space) throw notFound('space', path.id);
    return { status: 200, body: { data: space.record }, etag: etagOf(path.id, space.version) };
  };

  return {
    async spaces_list({ account, query, url }) {
      const list = listQueryOf(query, url.sent);
      const filters = { metadata: metadataFilter(url.sent) };
      const { records, total, totalExact, next } = await spaces.list(account.id, { ...list, filters });
      const pagination = paginationOf(url, list, { total, totalExact, onPage: records.length, next });
      return { status: 200, body: { data: records, ...pagination } };
    },

    async spaces_show({ account, path, headers }) {
      const space = await spaces.find(account.id, path.id);
      if (!space) throw notFound('space', path.id);
      const etag = etagOf(path.id, space.version);
      if (noneMatch(headers['If-None-Match'], etag)) return { status: 304, etag };
      return { status: 200, body: { data: space.record }, etag };
    },

    async spaces_store({ account, body, url, headers, requestId, actor }) {
      const space = await storeSpace(spaces, account.id, body, causeOf(requestId, actor, headers['Idempotency-Key']));
      const { id } = space.record;
      return {
        status: 201,
        body: { data: space.record },
        location: `${url.path}/${id}`,
        etag: etagOf(id, space.version),
      };
    },

    spaces_update: update,
    spaces_patch: update,

    async spaces_delete({ account, path, expected, requestId, actor }) {
      if (!(await spaces.remove(account.id, path.id, expected, causeOf(requestId, actor)))) {
        throw notFound('space', path.id);
      }
      return { status: 204 };
    },
  };
}
