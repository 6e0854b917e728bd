// The records a run makes: which resource an operation belongs to, and creating one with a spare valid input.

import type { Operation, Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import type { Input } from './inputs.js';
import { idOf, is2xx } from './replies.js';
import { checkResponse } from './response-checks.js';

export function resourceOf(ctx: Context, operation: Operation): Resource | undefined {
  // An action on a record (`/domains/{id}/verify`) belongs to the record's resource too.
  return ctx.model.resources.find(
    (r) =>
      r.collectionPath === operation.path ||
      r.itemPath === operation.path ||
      operation.path.startsWith(`${r.itemPath}/`),
  );
}

export function searchParamOf(list: Operation | undefined): string | undefined {
  return list?.queryParams.find((p) => ['search', 'q', 'query', 'filter'].includes(p.name))?.name;
}

/** Creates a record with a spare valid input; its id, or undefined (the failure is recorded). */
export async function createRecord(ctx: Context, resource: Resource, spareIndex: number, account = ctx.primary) {
  const spares = ctx.plan.spare[resource.create.id] ?? [];
  return createWith(ctx, resource, spares[spareIndex % Math.max(1, spares.length)], account);
}

/** Creates a record with `input`; its id, or undefined. The record is deleted at the end of the run. */
export async function createWith(ctx: Context, resource: Resource, input: Input | undefined, account = ctx.primary) {
  const exchange = await call(ctx, resource.create, { account, ...(input ? { input } : {}) });
  checkResponse(ctx.results, resource.create, exchange);
  const id = is2xx(exchange.reply.status) ? idOf(resource, exchange) : undefined;
  if (id !== undefined) ctx.created.push({ resource, id, account });
  return { id, exchange };
}
