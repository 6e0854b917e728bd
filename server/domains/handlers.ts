// HTTP handlers of the domain operations: map validated input to the repository and records to replies.

import type { Database } from '../db/database.js';
import { type EventSubscriber, eventLog } from '../events/outbox.js';
import { etagOf, ifMatchVersions, noneMatch, unlessChanged } from '../http/conventions/conditional.js';
import { listQueryOf, paginationOf } from '../http/conventions/pagination.js';
import { HttpProblem, notFound, validationProblem } from '../http/problems/problem.js';
import type { Handler, Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import { challengeName, uncheckableName } from './check-rules.js';
import type { DomainChecks } from './checks.js';
import { normalizeHostname, normalizePageUrl } from './fields.js';
import { type DomainChanges, DuplicateDomainError, domainRepository, NameHeldError, toRecord } from './repository.js';
import { verifyDomain } from './verify.js';

export type DomainOperation =
  | 'domains_list'
  | 'domains_show'
  | 'domains_store'
  | 'domains_update'
  | 'domains_patch'
  | 'domains_delete'
  | 'domains_verify';
type DomainHandlers = Pick<Handlers, DomainOperation>;

export function domainHandlers(db: Database, checks: DomainChecks, fanOut: EventSubscriber): DomainHandlers {
  const domains = domainRepository(db, checks.schedule, eventLog('domain', fanOut));
  const update: Handler<'domains_update'> = async ({ account, path, headers, body, requestId, actor }) => {
    const changes: DomainChanges = {};
    if (body.index_page !== undefined) changes.index_page = normalizePageUrl(body.index_page);
    if (body.not_found_page !== undefined) changes.not_found_page = normalizePageUrl(body.not_found_page);
    const expected = ifMatchVersions(headers['If-Match'], path.id);
    const domain = await unlessChanged('domain', path.id, () =>
      domains.update(account.id, path.id, changes, expected, causeOf(requestId, actor)),
    );
    if (!domain) throw notFound('domain', path.id);
    return { status: 200, body: { data: domain.record }, etag: etagOf(path.id, domain.version) };
  };

  return {
    async domains_list({ account, query, url }) {
      const list = listQueryOf(query, url.sent);
      const { records, total, totalExact, next } = await domains.list(account.id, { ...list, status: query.status });
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

    async domains_store({ account, body, url, headers, requestId, actor }) {
      // The validator has checked the name with the same rule, so it normalises.
      const name = normalizeHostname(body.name) ?? body.name;
      const uncheckable = uncheckableName(name);
      if (uncheckable) throw validationProblem([{ location: 'body', field: 'name', message: uncheckable }]);
      try {
        const domain = await domains.create(
          account.id,
          {
            name,
            index_page: normalizePageUrl(body.index_page) ?? null,
            not_found_page: normalizePageUrl(body.not_found_page) ?? null,
          },
          causeOf(requestId, actor, headers['Idempotency-Key']),
        );
        const { id } = domain.record;
        return {
          status: 201,
          body: { data: domain.record },
          location: `${url.path}/${id}`,
          etag: etagOf(id, domain.version),
        };
      } catch (error) {
        if (error instanceof NameHeldError) throw new HttpProblem('domain-held-elsewhere', heldDetail(body.name, name));
        if (error instanceof DuplicateDomainError) {
          throw new HttpProblem(
            'conflict',
            conflictDetail(body.name, name, url.path, await domains.idByName(account.id, name)),
          );
        }
        throw error;
      }
    },

    domains_update: update,
    domains_patch: update,

    async domains_verify({ account, path, requestId, actor }) {
      const outcome = await verifyDomain(
        db,
        checks,
        { accountId: account.id, id: path.id, cause: causeOf(requestId, actor) },
        fanOut,
      );
      switch (outcome.kind) {
        case 'not-found':
          throw notFound('domain', path.id);
        case 'rate-limited': {
          const { retryAfterSeconds, quota } = outcome;
          throw new HttpProblem(
            'verify-rate-limited',
            `A domain may be verified ${quota.limit} times per ${quota.windowSeconds} seconds; retry in ${retryAfterSeconds} seconds. The service keeps checking it by itself meanwhile.`,
            { headers: { 'Retry-After': String(retryAfterSeconds) } },
          );
        }
        case 'checked': {
          const { domain } = outcome;
          return { status: 200, body: { data: toRecord(domain) }, etag: etagOf(path.id, Number(domain.version)) };
        }
      }
    },

    async domains_delete({ account, path, headers, requestId, actor }) {
      const expected = ifMatchVersions(headers['If-Match'], path.id);
      if (
        !(await unlessChanged('domain', path.id, () =>
          domains.remove(account.id, path.id, expected, causeOf(requestId, actor)),
        ))
      ) {
        throw notFound('domain', path.id);
      }
      return { status: 204 };
    },
  };
}

/** Why another account's active name cannot be stored, and how a name is proven. */
function heldDetail(sent: string, stored: string): string {
  const name = sent === stored ? stored : `${stored} (sent as ${sent})`;
  return (
    `The domain name ${name} is held by another account, which proved control of it with a DNS TXT record at ` +
    `${challengeName(stored)}. A name is held by the account that proves it: once that account's claim lapses ` +
    '(its record gone past the grace period), store the name and publish the TXT record your domain shows in ' +
    '`verification`, then POST /domains/{id}/verify.'
  );
}

/**
 * Says whose the name is without saying which other account holds it, and names the name as sent when the
 * stored form differs (case, trailing dot, punycode).
 */
function conflictDetail(sent: string, stored: string, collection: string, ownId: number | undefined): string {
  const name = sent === stored ? stored : `${stored} (sent as ${sent})`;
  return ownId === undefined
    ? `A domain named ${name} already exists in this account.`
    : `A domain named ${name} already exists in this account: ${collection}/${ownId}.`;
}
