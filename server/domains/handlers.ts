// HTTP handlers of the domain operations: map validated input to the repository and records to replies.
import { etagOf, ifMatchVersions, noneMatch, unlessChanged } from '../http/conditional.js';
import type { Handler, Handlers } from '../http/operations.js';
import { listQueryOf, paginationOf } from '../http/pagination.js';
import { HttpProblem, notFound } from '../http/problem.js';
import { normalizeHostname, normalizePageUrl } from './fields.js';
import { type DomainChanges, type DomainRepository, DuplicateDomainError } from './repository.js';

export type DomainOperation =
  | 'domains_list'
  | 'domains_show'
  | 'domains_store'
  | 'domains_update'
  | 'domains_patch'
  | 'domains_delete';
type DomainHandlers = Pick<Handlers, DomainOperation>;

export function domainHandlers(domains: DomainRepository): DomainHandlers {
  const update: Handler<'domains_update'> = async ({ account, path, headers, body }) => {
    const changes: DomainChanges = {};
    if (body.index_page !== undefined) changes.index_page = normalizePageUrl(body.index_page);
    if (body.not_found_page !== undefined) changes.not_found_page = normalizePageUrl(body.not_found_page);
    const expected = ifMatchVersions(headers['If-Match'], path.id);
    const domain = await unlessChanged('domain', path.id, () => domains.update(account.id, path.id, changes, expected));
    if (!domain) throw notFound('domain', path.id);
    return { status: 200, body: { data: domain.record }, etag: etagOf(path.id, domain.version) };
  };

  return {
    async domains_list({ account, query, url }) {
      const list = listQueryOf(query, url.sent);
      const { records, total, totalExact, next } = await domains.list(account.id, list);
      const pagination = paginationOf(url, list, { total, totalExact, onPage: records.length, next });
      return { status: 200, body: { data: records, ...pagination } };
    },

    async domains_show({ account, path, headers }) {
      const domain = await domains.find(account.id, path.id);
      if (!domain) throw notFound('domain', path.id);
      const etag = etagOf(path.id, domain.version);
      if (noneMatch(headers['If-None-Match'], etag)) return { status: 304, etag };
      return { status: 200, body: { data: domain.record }, etag };
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
        const { id } = domain.record;
        return {
          status: 201,
          body: { data: domain.record },
          location: `${url.path}/${id}`,
          etag: etagOf(id, domain.version),
        };
      } catch (error) {
        if (error instanceof DuplicateDomainError) {
          throw new HttpProblem(
            409,
            'conflict',
            conflictDetail(body.name, name, url.path, await domains.idByName(account.id, name)),
          );
        }
        throw error;
      }
    },

    domains_update: update,
    domains_patch: update,

    async domains_delete({ account, path, headers }) {
      const expected = ifMatchVersions(headers['If-Match'], path.id);
      if (!(await unlessChanged('domain', path.id, () => domains.remove(account.id, path.id, expected)))) {
        throw notFound('domain', path.id);
      }
      return { status: 204 };
    },
  };
}

/**
 * Says whose the name is without saying which other account holds it, and names the name as sent when the
 * stored form differs (case, trailing dot, punycode).
 */
function conflictDetail(sent: string, stored: string, collection: string, ownId: number | undefined): string {
  const name = sent === stored ? stored : `${stored} (sent as ${sent})`;
  return ownId === undefined
    ? `The domain name ${name} is taken by another account; a name is unique across the whole service, so pick another.`
    : `A domain named ${name} already exists in this account: ${collection}/${ownId}.`;
}
