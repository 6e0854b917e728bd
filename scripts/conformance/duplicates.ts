// Creates that repeat a unique field of an earlier create. Where the spec marks the field unique (spec-model.ts)
// and documents 409, the repeat must get 409; where it documents 409 but names no unique field, an identical
// create is sent twice and the second must get 2xx or a documented 4xx.

import { call } from './calls.js';
import type { Duplicate } from './cases.js';
import type { Context } from './context.js';
import { pool } from './pool.js';
import { createWith, ledgerOf, release } from './records.js';
import { refusalOf } from './refusals.js';
import { idOf, is2xx, is4xx } from './replies.js';
import { checkResponse, documentedResponse } from './response-checks.js';
import { slice } from './rotation.js';

export async function checkDuplicates(ctx: Context): Promise<void> {
  const duplicates = slice(
    ctx,
    'duplicate_conflict',
    ctx.plan.duplicates,
    (duplicate) =>
      `${duplicate.operation} ${ctx.plan.duplicates.filter((d) => d.operation === duplicate.operation).indexOf(duplicate)}`,
    (duplicate) => duplicate.operation,
  );
  await pool(duplicates, ctx.concurrency, (duplicate) => checkDuplicate(ctx, duplicate));
}

async function checkDuplicate(ctx: Context, { operation, field, first, second }: Duplicate): Promise<void> {
  const check = 'duplicate_conflict';
  const resource = ctx.model.resources.find((r) => r.create.id === operation);
  if (!resource) return;
  if (ctx.stateless) return ctx.results.skip(operation, check, ctx.stateless);
  const original = await createWith(ctx, resource, first);
  if (original.refused) return ctx.results.skip(operation, check, original.refused.reason);
  if (original.id === undefined) {
    const { status } = original.exchange.reply;
    return ctx.results.fail(operation, check, `the first create answered ${status}`, original.exchange);
  }
  const repeat = await call(ctx, resource.create, { input: second });
  checkResponse(ctx.results, resource.create, repeat);
  const { status } = repeat.reply;
  const again = is2xx(status) ? idOf(resource, repeat) : undefined;
  if (again !== undefined) {
    ctx.created.push({ resource, id: again, account: ctx.primary });
    ledgerOf(ctx, resource.name).created++;
  }
  const refused = refusalOf(resource.create, repeat);
  // Done with both: deleted now, so that an account's limit (webhook endpoints) is not used up by this check.
  await release(ctx, resource, original.id);
  if (again !== undefined && again !== original.id) await release(ctx, resource, again);
  if (refused && field === undefined) return ctx.results.skip(operation, check, refused.reason);
  const problem =
    field !== undefined
      ? status === 409
        ? undefined
        : `a create repeating the unique ${field} of an earlier one answered ${status}, not the documented 409`
      : is2xx(status) || (is4xx(status) && documentedResponse(resource.create, status))
        ? undefined
        : `an identical second create answered ${status}, neither 2xx nor a documented 4xx`;
  ctx.results.judge(operation, check, problem, repeat);
}
