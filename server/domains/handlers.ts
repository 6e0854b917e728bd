// HTTP handlers of the domain operations: map validated input to the repository and records to replies.
import type { Handler, Handlers } from '../http/operations.js';
import { listQueryOf, paginationOf } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { normalizeHostname, normalizePageUrl } from './fields.js';
import { type DomainChanges, type DomainRepository, DuplicateDomainError } from './repository.js';

type DomainHandlers = Pick<
  Handlers,
  'domains_list' | 'domains_show' | 'domains_store' | 'domains_update' | 'domains_patch' | 'domains_delete'
>;

export function domainHandlers(domains: DomainRepository): DomainHandlers {
  const update: Handler<'domains_update'> = async ({ account, path, body }) => {
    const changes: DomainChanges = {};
    if (body.index_page !== undefined) changes.index_page = normalizePageUrl(body.index_page);
    if (body.not_found_page !== undefined) changes.not_found_page = normalizePageUrl(body.not_found_page);
    const domain = await domains.update(account.id, path.id, changes);
    if (!domain) throw notFound('domain', path.id);
    return { status: 200, body: { data: domain } };
  };

  return {
    async domains_list({ account, query, url }) {
      const list = listQueryOf(query);
      const { records, total } = await domains.list(account.id, list);
      return { status: 200, body: { data: records, ...paginationOf(url, list.page, list.perPage, total) } };
    },

    async domains_show({ account, path }) {
      const domain = await domains.find(account.id, path.id);
      if (!domain) throw notFound('domain', path.id);
      return { status: 200, body: { data: domain } };
    },

    async domains_store({ account, body, url }) {
      // The validator has checked the name with the same rule, so it normalises.
      const name = normalizeHostname(body.name) ?? body.name;
      try {
        const domain = await domains.create(account.id, {
          name,
          index_page: normalizePageUrl(body.index_page) ?? null,
          not_found_page: normalizePageUrl(body.not_found_page) ?? null,
        });
        return { status: 201, body: { data: domain }, location: `${url.path}/${domain.id}` };
      } catch (error) {
        if (error instanceof DuplicateDomainError) throw new HttpProblem(409, 'conflict', error.message);
        throw error;
      }
    },

    domains_update: update,
    domains_patch: update,

    async domains_delete({ account, path }) {
      if (!(await domains.remove(account.id, path.id))) throw notFound('domain', path.id);
      return { status: 204 };
    },
  };
}
