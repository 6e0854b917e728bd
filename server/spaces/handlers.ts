// HTTP handlers of the space operations: map validated input to the repository and records to replies.
import type { Handler, Handlers } from '../http/operations.js';
import { listQueryOf, paginationOf } from '../http/pagination.js';
import { notFound } from '../http/problem.js';
import type { SpaceChanges, SpaceRepository } from './repository.js';

type SpaceHandlers = Pick<
  Handlers,
  'spaces_list' | 'spaces_show' | 'spaces_store' | 'spaces_update' | 'spaces_patch' | 'spaces_delete'
>;

export function spaceHandlers(spaces: SpaceRepository): SpaceHandlers {
  const update: Handler<'spaces_update'> = async ({ account, path, body }) => {
    const changes: SpaceChanges = {};
    if (body.name !== undefined) changes.name = body.name.trim();
    if (body.color !== undefined) changes.color = body.color;
    const space = await spaces.update(account.id, path.id, changes);
    if (!space) throw notFound('space', path.id);
    return { status: 200, body: { data: space } };
  };

  return {
    async spaces_list({ account, query, url }) {
      const list = listQueryOf(query);
      const { records, total } = await spaces.list(account.id, list);
      return { status: 200, body: { data: records, ...paginationOf(url, list.page, list.perPage, total) } };
    },

    async spaces_show({ account, path }) {
      const space = await spaces.find(account.id, path.id);
      if (!space) throw notFound('space', path.id);
      return { status: 200, body: { data: space } };
    },

    async spaces_store({ account, body, url }) {
      // The validator has filled in the spec's default colour; `?? 1` only satisfies the optional type.
      const space = await spaces.create(account.id, { name: body.name.trim(), color: body.color ?? 1 });
      return { status: 201, body: { data: space }, location: `${url.path}/${space.id}` };
    },

    spaces_update: update,
    spaces_patch: update,

    async spaces_delete({ account, path }) {
      if (!(await spaces.remove(account.id, path.id))) throw notFound('space', path.id);
      return { status: 204 };
    },
  };
}
