// Sends the plan's generated cases: valid inputs must be accepted (2xx) on records the run made and get the
// documented 404 on ids the account does not own; inputs with one violation are rejected with a documented 4xx
// (406, 413 where the spec names them). Creates are read back, deletes leave a 404, rejected creates nothing.
import type { Case, Target } from './cases.js';
import { type Context, call, idOf, is2xx, is4xx, itemsOf, pool } from './context.js';
import { describeDifferences, differences, fieldsOf } from './diff.js';
import type { Exchange } from './http.js';
import type { Input } from './inputs.js';
import { limitation } from './profiles.js';
import { checkResponse, documentedResponse } from './response-checks.js';
import type { CheckName } from './results.js';
import type { Operation, Resource } from './spec-model.js';

/** At most this many rejected creates per operation are searched for afterwards (each costs a list request). */
const SEARCHES_PER_OPERATION = 25;

export function resourceOf(ctx: Context, operation: Operation): Resource | undefined {
  return ctx.model.resources.find((r) => r.collectionPath === operation.path || r.itemPath === operation.path);
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

/** Makes the records the owned show/update/patch cases share (the fixture stands in if none can be made). */
async function createTargets(ctx: Context): Promise<void> {
  for (const resource of ctx.model.resources) {
    const ids: string[] = [];
    for (const input of ctx.plan.targets[resource.name] ?? []) {
      const { id } = await createWith(ctx, resource, input);
      if (id !== undefined) ids.push(id);
    }
    const fixture = ctx.fixtures.get(resource.name);
    ctx.targets.set(resource.name, ids.length ? ids : fixture ? [fixture.id] : []);
  }
}

export async function runValidCases(ctx: Context): Promise<void> {
  const byId = new Map(ctx.model.operations.map((op) => [op.id, op]));
  await createTargets(ctx);
  await pool(ctx.plan.valid, ctx.concurrency, async (testCase) => {
    const operation = byId.get(testCase.operation) as Operation;
    const resource = resourceOf(ctx, operation);
    const target = testCase.target;
    if (target?.kind === 'unknown') return unknownIdCase(ctx, operation, resource, target.id, testCase.input);
    const ids = await idsFor(ctx, operation, resource, target);
    if (ids === undefined) {
      ctx.results.skip(operation.id, 'valid_input_accepted', 'no record to try it on: creating one failed');
      return;
    }
    const exchange = await call(ctx, operation, { ids, input: testCase.input });
    checkResponse(ctx.results, operation, exchange);
    const accepted = is2xx(exchange.reply.status);
    ctx.results.judge(
      operation.id,
      'valid_input_accepted',
      accepted ? undefined : `a valid request answered ${exchange.reply.status}`,
      exchange,
    );
    if (!accepted || !resource) return;
    if (operation === resource.create) await afterCreate(ctx, resource, exchange);
    if (operation === resource.remove) await afterDelete(ctx, resource, ids[resource.idParam] as string);
  });
}

/** Path ids for a case: a delete gets a fresh record of its own; other operations one of the shared targets. */
async function idsFor(ctx: Context, operation: Operation, resource: Resource | undefined, target?: Target) {
  if (operation.pathParams.length === 0) return {};
  if (!resource) return undefined;
  if (operation === resource.remove) {
    const create = target?.kind === 'owned' ? target.create : undefined;
    const { id } = create ? await createWith(ctx, resource, create) : await createRecord(ctx, resource, 2);
    return id === undefined ? undefined : { [resource.idParam]: id };
  }
  const targets = ctx.targets.get(resource.name) ?? [];
  const id = target?.kind === 'owned' && targets.length ? targets[target.slot % targets.length] : undefined;
  const fallback = ctx.fixtures.get(resource.name)?.id;
  return (id ?? fallback) === undefined ? undefined : { [resource.idParam]: (id ?? fallback) as string };
}

/**
 * A valid request to an id the account does not own must get the documented 404. A write goes only where a show
 * has just answered 404, so it can never land on a record the run did not make for itself.
 */
async function unknownIdCase(
  ctx: Context,
  operation: Operation,
  resource: Resource | undefined,
  id: string,
  input: Input,
): Promise<void> {
  const check = 'unknown_id_not_found';
  if (!ctx.results.enabled(check)) return;
  if (ctx.stateless) return ctx.results.skip(operation.id, check, ctx.stateless);
  if (!resource) return ctx.results.skip(operation.id, check, 'the path is not a resource the run can create');
  if (ctx.created.some((record) => record.resource === resource && record.id === id)) {
    return ctx.results.skip(operation.id, check, 'the generated id is one of the records the run made');
  }
  const ids = { [resource.idParam]: id };
  const judge = (subject: Operation, exchange: Exchange) => {
    checkResponse(ctx.results, subject, exchange);
    const { status } = exchange.reply;
    const expected = subject.responses['404'] ? 404 : undefined;
    const problem =
      expected !== undefined
        ? status === expected
          ? undefined
          : `an id the account does not own answered ${status}, not the documented 404`
        : is4xx(status) && documentedResponse(subject, status)
          ? undefined
          : `an id the account does not own answered ${status}, not a documented 4xx (the spec documents no 404)`;
    return ctx.results.judge(subject.id, check, problem, exchange);
  };
  if (operation !== resource.show) {
    if (!resource.show) return ctx.results.skip(operation.id, check, 'no show operation to make sure the id is unused');
    if (!judge(resource.show, await call(ctx, resource.show, { ids }))) return;
  }
  judge(operation, await call(ctx, operation, { ids, input }));
}

async function afterCreate(ctx: Context, resource: Resource, created: Exchange): Promise<void> {
  const id = idOf(resource, created);
  if (id !== undefined) ctx.created.push({ resource, id, account: ctx.primary });
  if (!resource.show) return;
  if (ctx.stateless) {
    ctx.results.skip(resource.create.id, 'created_readable', ctx.stateless);
    return;
  }
  if (id === undefined) {
    ctx.results.fail(resource.create.id, 'created_readable', 'the create answered no id (body or Location)', created);
    return;
  }
  const shown = await call(ctx, resource.show, { ids: { [resource.idParam]: id } });
  checkResponse(ctx.results, resource.show, shown);
  const changed = differences(created.reply.json, shown.reply.json);
  ctx.results.judge(
    resource.create.id,
    'created_readable',
    shown.reply.status !== 200
      ? `reading the created record answered ${shown.reply.status}`
      : changed.length
        ? `reading the created record answered other values than the create did, in ${fieldsOf(changed)}`
        : undefined,
    shown,
    changed.length ? `expected = the create's answer:\n${describeDifferences(changed)}` : undefined,
  );
}

async function afterDelete(ctx: Context, resource: Resource, id: string): Promise<void> {
  const subject = resource.remove?.id as string;
  if (!resource.show) return;
  if (ctx.stateless) {
    ctx.results.skip(subject, 'deleted_gone', ctx.stateless);
    return;
  }
  const shown = await call(ctx, resource.show, { ids: { [resource.idParam]: id } });
  checkResponse(ctx.results, resource.show, shown);
  const status = shown.reply.status;
  const gone = ctx.results.judge(
    subject,
    'deleted_gone',
    status === 404 ? undefined : `reading a deleted record answered ${status}`,
    shown,
  );
  // Gone for good: the clean-up need not try it again.
  if (gone) ctx.created = ctx.created.filter((record) => record.resource !== resource || record.id !== id);
}

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
