// Sends the plan's generated cases: valid inputs must be accepted (2xx), inputs with one violation rejected with
// a documented 4xx. Creates are read back, deletes must leave a 404, rejected creates must leave nothing.
import type { Case } from './cases.js';
import { type Context, call, idOf, is2xx, is4xx, itemsOf, pool } from './context.js';
import type { Exchange } from './http.js';
import { limitation } from './profiles.js';
import { checkResponse, documentedResponse } from './response-checks.js';
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
  const input = spares[spareIndex % Math.max(1, spares.length)];
  const exchange = await call(ctx, resource.create, { account, ...(input ? { input } : {}) });
  checkResponse(ctx.results, resource.create, exchange);
  const id = is2xx(exchange.reply.status) ? idOf(resource, exchange) : undefined;
  if (id !== undefined) ctx.created.push({ resource, id, account });
  return { id, exchange };
}

export async function runValidCases(ctx: Context): Promise<void> {
  const byId = new Map(ctx.model.operations.map((op) => [op.id, op]));
  let deletes = 0;
  await pool(ctx.plan.valid, ctx.concurrency, async (testCase) => {
    const operation = byId.get(testCase.operation) as Operation;
    const resource = resourceOf(ctx, operation);
    const ids = await idsFor(ctx, operation, resource, () => deletes++);
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

/** Path ids for a case: the fixture, or for a delete a fresh record of its own. */
async function idsFor(ctx: Context, operation: Operation, resource: Resource | undefined, nth: () => number) {
  if (operation.pathParams.length === 0) return {};
  if (!resource) return undefined;
  if (operation === resource.remove) {
    const { id } = await createRecord(ctx, resource, 2 + nth());
    return id === undefined ? undefined : { [resource.idParam]: id };
  }
  const fixture = ctx.fixtures.get(resource.name);
  return fixture ? { [resource.idParam]: fixture.id } : undefined;
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
  const same = JSON.stringify(shown.reply.json) === JSON.stringify(created.reply.json);
  ctx.results.judge(
    resource.create.id,
    'created_readable',
    shown.reply.status !== 200
      ? `reading the created record answered ${shown.reply.status}`
      : same
        ? undefined
        : 'reading the created record returned something else than the create did',
    shown,
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
  ctx.results.judge(
    subject,
    'deleted_gone',
    status === 404 ? undefined : `reading a deleted record answered ${status}`,
    shown,
  );
}

export async function runInvalidCases(ctx: Context): Promise<void> {
  const byId = new Map(ctx.model.operations.map((op) => [op.id, op]));
  const rejectedCreates: Array<{ resource: Resource; testCase: Case; exchange: Exchange }> = [];
  await pool(ctx.plan.invalid, ctx.concurrency, async (testCase) => {
    const operation = byId.get(testCase.operation) as Operation;
    const mutation = testCase.mutation;
    if (!mutation) return;
    const skipped = limitation(ctx, 'invalid_input_rejected', mutation.kind);
    if (skipped) {
      ctx.results.skip(operation.id, 'invalid_input_rejected', skipped);
      return;
    }
    const resource = resourceOf(ctx, operation);
    const fixture = resource && ctx.fixtures.get(resource.name);
    if (operation.pathParams.length > 0 && !fixture) {
      ctx.results.skip(operation.id, 'invalid_input_rejected', 'no record to try it on: creating one failed');
      return;
    }
    const ids = resource && fixture ? { [resource.idParam]: fixture.id } : {};
    const exchange = await call(ctx, operation, {
      ids,
      input: testCase.input,
      ...(mutation.wire ? { wire: mutation.wire } : {}),
    });
    checkResponse(ctx.results, operation, exchange);
    const { status } = exchange.reply;
    const documented = documentedResponse(operation, status) !== undefined;
    const problem = is2xx(status)
      ? `accepted (${status}) a request with ${mutation.kind}`
      : !is4xx(status)
        ? `answered ${status} to a request with ${mutation.kind}, not 4xx`
        : !documented
          ? `answered ${status} to a request with ${mutation.kind}: not a documented status`
          : undefined;
    ctx.results.judge(operation.id, 'invalid_input_rejected', problem, exchange);
    if (resource && operation === resource.create) {
      if (is2xx(status)) {
        const id = idOf(resource, exchange);
        if (id !== undefined) ctx.created.push({ resource, id, account: ctx.primary });
      } else rejectedCreates.push({ resource, testCase, exchange });
    }
  });
  await checkNothingLeft(ctx, rejectedCreates);
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
