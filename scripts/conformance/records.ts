// The records a run makes: which resource an operation belongs to, and creating one with a spare valid input.

import type { Operation, Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import type { Exchange } from './http.js';
import type { Input } from './inputs.js';
import { type Refusal, refusalOf } from './refusals.js';
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

export interface Created {
  id: string | undefined;
  exchange: Exchange;
  /** The create was refused as the contract allows (refusals.ts): not a failure of the check that needed it. */
  refused?: Refusal;
}

/**
 * Creates a record with `input`; its id, or undefined. The record is deleted at the end of the run (or earlier,
 * with `release`). Once the account met its limit for a resource, no more creates are sent for it: the limit's
 * refusal is answered again, so the run stays inside what the deployment allows.
 */
export async function createWith(
  ctx: Context,
  resource: Resource,
  input: Input | undefined,
  account = ctx.primary,
): Promise<Created> {
  const full = ctx.limits.get(`${resource.name}/${account.variable}`);
  if (full) return { id: undefined, exchange: full.exchange, refused: full.refusal };
  const exchange = await call(ctx, resource.create, { account, ...(input ? { input } : {}) });
  checkResponse(ctx.results, resource.create, exchange);
  const id = is2xx(exchange.reply.status) ? idOf(resource, exchange) : undefined;
  if (id !== undefined) {
    ctx.created.push({ resource, id, account });
    ledgerOf(ctx, resource.name).created++;
  }
  const refused = id === undefined ? refusalOf(resource.create, exchange) : undefined;
  if (refused) ctx.refusedCreates.set(resource.name, refused.reason);
  if (refused?.limit) {
    ctx.limits.set(`${resource.name}/${account.variable}`, { refusal: refused, exchange });
    ctx.log(`${resource.name}: ${refused.reason}; the run makes no more of them`);
  }
  return { id, exchange, ...(refused ? { refused } : {}) };
}

export function ledgerOf(ctx: Context, resource: string): { created: number; left: number } {
  const entry = ctx.ledger.get(resource) ?? { created: 0, left: 0 };
  ctx.ledger.set(resource, entry);
  return entry;
}

/** The record is gone (deleted by a check, or found gone): the clean-up need not delete it. */
export function forget(ctx: Context, resource: Resource, id: string): void {
  ctx.created = ctx.created.filter((record) => record.resource !== resource || record.id !== id);
  // A record gone makes room again under the account's limit.
  for (const key of [...ctx.limits.keys()]) if (key.startsWith(`${resource.name}/`)) ctx.limits.delete(key);
}

/** Deletes a record the run made as soon as a check is done with it, so the account's limits are not used up. */
export async function release(ctx: Context, resource: Resource, id: string, account = ctx.primary): Promise<void> {
  if (!resource.remove || ctx.stateless) return;
  const exchange = await call(ctx, resource.remove, { ids: { [resource.idParam]: id }, account });
  checkResponse(ctx.results, resource.remove, exchange);
  if (is2xx(exchange.reply.status) || exchange.reply.status === 404) forget(ctx, resource, id);
}
