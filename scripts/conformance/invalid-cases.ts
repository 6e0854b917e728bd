// Sends the plan's invalid cases: inputs with one violation are rejected with a documented 4xx (406, 413 where
// the spec names them), and a rejected create leaves nothing behind.

import type { Operation, Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Case } from './cases.js';
import type { Context } from './context.js';
import type { Exchange } from './http.js';
import { pool } from './pool.js';
import { limitation } from './profiles.js';
import { resourceOf, searchParamOf } from './records.js';
import { idOf, is2xx, is4xx, itemsOf } from './replies.js';
import { checkResponse, documentedResponse } from './response-checks.js';
import type { CheckName } from './results.js';

/** At most this many rejected creates per operation are searched for afterwards (each costs a list request). */
const SEARCHES_PER_OPERATION = 25;

export async function runInvalidCases(ctx: Context): Promise<void> {
  const byId = new Map(ctx.model.operations.map((op) => [op.id, op]));
  const rejectedCreates: Array<{ resource: Resource; testCase: Case; exchange: Exchange }> = [];
  await pool(ctx.plan.invalid, ctx.concurrency, async (testCase) => {
    const operation = byId.get(testCase.operation) as Operation;
    const mutation = testCase.mutation;
    if (!mutation) return;
    const { check, expected } = expectationOf(operation, mutation.kind);
    const skipped = limitation(ctx, check, mutation.kind);
    if (skipped) {
      ctx.results.skip(operation.id, check, skipped);
      return;
    }
    const resource = resourceOf(ctx, operation);
    const fixture = resource && ctx.fixtures.get(resource.name);
    if (operation.pathParams.length > 0 && !fixture) {
      ctx.results.skip(operation.id, check, 'no record to try it on: creating one failed');
      return;
    }
    const ids = resource && fixture ? { [resource.idParam]: fixture.id } : {};
    const exchange = await call(ctx, operation, {
      ids,
      input: testCase.input,
      ...(mutation.wire ? { wire: mutation.wire } : {}),
      ...(mutation.headers ? { headers: mutation.headers } : {}),
    });
    checkResponse(ctx.results, operation, exchange);
    const { status } = exchange.reply;
    const documented = documentedResponse(operation, status) !== undefined;
    const problem = is2xx(status)
      ? `accepted (${status}) a request with ${mutation.kind}`
      : expected !== undefined
        ? status === expected
          ? undefined
          : `answered ${status} to a request with ${mutation.kind}, not the documented ${expected}`
        : !is4xx(status)
          ? `answered ${status} to a request with ${mutation.kind}, not 4xx`
          : !documented
            ? `answered ${status} to a request with ${mutation.kind}: not a documented status`
            : undefined;
    ctx.results.judge(operation.id, check, problem, exchange);
    if (resource && operation === resource.create) {
      if (is2xx(status)) {
        const id = idOf(resource, exchange);
        if (id !== undefined) ctx.created.push({ resource, id, account: ctx.primary });
      } else rejectedCreates.push({ resource, testCase, exchange });
    }
  });
  await checkNothingLeft(ctx, rejectedCreates);
}

/**
 * The check a negative case counts under, and the status it must get when the spec documents one for its kind:
 * 406 for an unacceptable Accept, 413 for an oversized body; otherwise any documented 4xx.
 */
function expectationOf(operation: Operation, kind: string): { check: CheckName; expected?: number } {
  const documented = (status: number) => (operation.responses[String(status)] ? status : undefined);
  if (kind === 'unacceptable_accept') return { check: 'not_acceptable', expected: 406 };
  if (kind === 'oversized_body') {
    const expected = documented(413);
    return expected ? { check: 'body_too_large', expected } : { check: 'body_too_large' };
  }
  return { check: 'invalid_input_rejected' };
}

/** After a rejected create, a search for the names it carried finds nothing. */
async function checkNothingLeft(
  ctx: Context,
  rejected: Array<{ resource: Resource; testCase: Case; exchange: Exchange }>,
): Promise<void> {
  const tokenPattern = new RegExp(`${ctx.plan.tag}[0-9a-z]+`, 'gi');
  const perOperation = new Map<string, number>();
  const jobs = rejected.flatMap((job) => {
    const tokens = JSON.stringify(job.testCase.input.body?.value ?? '').match(tokenPattern) ?? [];
    const done = perOperation.get(job.resource.create.id) ?? 0;
    if (tokens.length === 0 || done >= SEARCHES_PER_OPERATION) return [];
    perOperation.set(job.resource.create.id, done + 1);
    return [{ ...job, token: (tokens[0] as string).toLowerCase() }];
  });
  await pool(jobs, ctx.concurrency, async ({ resource, token, exchange: rejection }) => {
    const subject = resource.create.id;
    const search = searchParamOf(resource.list);
    if (ctx.stateless) return ctx.results.skip(subject, 'failed_create_leaves_nothing', ctx.stateless);
    if (!resource.list || !search) {
      return ctx.results.skip(subject, 'failed_create_leaves_nothing', 'the list operation has no search parameter');
    }
    const listed = await call(ctx, resource.list, { input: { query: { [search]: token } } });
    checkResponse(ctx.results, resource.list, listed);
    const items = itemsOf(listed.reply.json);
    const problem =
      listed.reply.status !== 200 || !items
        ? `searching after a rejected create answered ${listed.reply.status}`
        : items.length > 0
          ? `a rejected create (${rejection.reply.status}) left a record behind`
          : undefined;
    ctx.results.judge(subject, 'failed_create_leaves_nothing', problem, problem && items?.length ? rejection : listed);
  });
}
