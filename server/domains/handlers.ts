// HTTP handlers of the domain operations: map validated input to the repository and the use cases (store.ts,
// verify.ts), and their records and outcomes to replies.

import type { Database } from '../db/database.js';
import type { ListFilters } from '../db/listing.js';
import { type EventSubscriber, eventLog } from '../events/outbox.js';
import { etagOf, noneMatch } from '../http/conventions/conditional.js';
import { commaFilters, metadataFilter } from '../http/conventions/list-filters.js';
import { withinMetadataLimit } from '../http/conventions/metadata-limit.js';
import { listQueryOf, paginationOf } from '../http/conventions/pagination.js';
import { HttpProblem, notFound, validationProblem } from '../http/problems/problem.js';
import type { Handler, Handlers } from '../http/routing/operations.js';
import { causeOf } from '../http/routing/request-cause.js';
import { challengeName, DOMAIN_STATUSES } from './check-rules.js';
import { type DomainChecks, targetsOf } from './checks.js';
import { normalizePageUrl } from './fields.js';
import { type DomainChanges, domainRepository, toRecord } from './repository.js';
import { ROUTING_CODES } from './routing-rules.js';
import { hasTargets, type RoutingTargets } from './routing-targets.js';
import { storeDomain } from './store.js';
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
  const targets = targetsOf(checks);
  const domains = domainRepository(db, checks.schedule, eventLog('domain', fanOut), targets);
  const update: Handler<'domains_update'> = async ({ account, path, expected, body, requestId, actor }) => {
    const changes: DomainChanges = {};
    if (body.index_page !== undefined) changes.index_page = normalizePageUrl(body.index_page);
    if (body.not_found_page !== undefined) changes.not_found_page = normalizePageUrl(body.not_found_page);
    if (body.metadata !== undefined) changes.metadata = body.metadata;
    const domain = await withinMetadataLimit(() =>
      domains.update(account.id, path.id, changes, expected, causeOf(requestId, actor)),
    );
    if (!domain) throw notFound('domain', path.id);
    return { status: 200, body: { data: domain.record }, etag: etagOf(path.id, domain.version) };
  };

  return {
    async domains_list({ account, query, url }) {
      const list = listQueryOf(query, url.sent);
      const filters = { ...domainListFilters(query, targets), metadata: metadataFilter(url.sent) };
      const { records, total, totalExact, next } = await domains.list(account.id, { ...list, filters });
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
      const outcome = await storeDomain(
        domains,
        account.id,
        body,
        causeOf(requestId, actor, headers['Idempotency-Key']),
      );
      switch (outcome.kind) {
        case 'uncheckable':
          throw validationProblem([{ location: 'body', field: 'name', message: outcome.reason }]);
        case 'held-elsewhere':
          throw new HttpProblem('domain-held-elsewhere', heldDetail(body.name, outcome.name));
        case 'duplicate':
          throw new HttpProblem('conflict', conflictDetail(body.name, outcome.name, url.path, outcome.existingId));
        case 'stored': {
          const { id } = outcome.domain.record;
          return {
            status: 201,
            body: { data: outcome.domain.record },
            location: `${url.path}/${id}`,
            etag: etagOf(id, outcome.domain.version),
          };
        }
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
          return {
            status: 200,
            body: { data: toRecord(domain, targets) },
            etag: etagOf(path.id, Number(domain.version)),
          };
        }
      }
    },

    async domains_delete({ account, path, expected, requestId, actor }) {
      if (!(await domains.remove(account.id, path.id, expected, causeOf(requestId, actor)))) {
        throw notFound('domain', path.id);
      }
      return { status: 204 };
    },
  };
}

/**
 * The list's `status` and `routing` filters. Without any routing target every domain is `no_target` whatever
 * its stored code (repository.ts routingOf), so that code keeps every row and the others none.
 */
function domainListFilters(query: { status?: string; routing?: string }, targets: RoutingTargets): ListFilters {
  const { status, routing } = commaFilters({
    status: { sent: query.status, allowed: DOMAIN_STATUSES },
    routing: { sent: query.routing, allowed: ROUTING_CODES },
  });
  const columns: NonNullable<ListFilters['columns']> = [];
  if (status) columns.push({ column: 'status', values: status });
  if (routing && hasTargets(targets)) columns.push({ column: 'routing_code', values: routing });
  else if (routing && !routing.includes('no_target')) columns.push({ column: 'routing_code', values: [] });
  return { columns };
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
