// Sends the plan's valid cases: they must be accepted (2xx) on records the run made and get the documented 404
// on ids the account does not own. Creates are read back, deletes leave a 404.

import type { Operation, Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Target } from './cases.js';
import type { Context } from './context.js';
import { asDocumented, describeDifferences, differences, fieldsOf } from './diff.js';
import type { Exchange } from './http.js';
import type { Input } from './inputs.js';
import { pool } from './pool.js';
import { createRecord, createWith, forget, ledgerOf, release, resourceOf } from './records.js';
import { refusalOf } from './refusals.js';
import { idOf, is2xx, is4xx, recordOf } from './replies.js';
import { checkResponse, documentedResponse } from './response-checks.js';
import { unreflected } from './sent-values.js';

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
    const full =
      resource && operation === resource.create && ctx.limits.get(`${resource.name}/${ctx.primary.variable}`);
    if (full) return ctx.results.skip(operation.id, 'valid_input_accepted', full.refusal.reason);
    const ids = await idsFor(ctx, operation, resource, target);
    if (typeof ids === 'string') return ctx.results.skip(operation.id, 'valid_input_accepted', ids);
    const exchange = await call(ctx, operation, { ids, input: testCase.input });
    checkResponse(ctx.results, operation, exchange);
    const accepted = is2xx(exchange.reply.status);
    const refused = accepted ? undefined : refusalOf(operation, exchange);
    if (refused) {
      if (refused.limit && resource)
        ctx.limits.set(`${resource.name}/${ctx.primary.variable}`, { refusal: refused, exchange });
      return ctx.results.skip(operation.id, 'valid_input_accepted', refused.reason);
    }
    ctx.results.judge(
      operation.id,
      'valid_input_accepted',
      accepted ? undefined : `a valid request answered ${exchange.reply.status}`,
      exchange,
    );
    if (!accepted || !resource) return;
    if (operation === resource.create) await afterCreate(ctx, resource, exchange, testCase.input);
    if (operation === resource.remove) await afterDelete(ctx, resource, ids[resource.idParam] as string);
  });
}

const NO_RECORD = 'no record to try it on: creating one failed';

/**
 * Path ids for a case: a delete gets a fresh record of its own; other operations one of the shared targets.
 * A string when there is none: why.
 */
async function idsFor(
  ctx: Context,
  operation: Operation,
  resource: Resource | undefined,
  target?: Target,
): Promise<Record<string, string> | string> {
  if (operation.pathParams.length === 0) return {};
  if (!resource) return NO_RECORD;
  // A record under the resource's record (a recovery of a webhook endpoint): the run makes none to name.
  const under = operation.pathParams.find((param) => param.name !== resource.idParam);
  if (under) return `no record to try it on: the run makes none to name in ${under.name}`;
  // A delete, and an operation a record takes once (`x-once-per-record`: a key is rotated once), gets a fresh one.
  if (operation === resource.remove || operation.object['x-once-per-record'] === true) {
    const create = target?.kind === 'owned' ? target.create : undefined;
    const made = create ? await createWith(ctx, resource, create) : await createRecord(ctx, resource, 2);
    if (made.id === undefined)
      return made.refused ? `no record to try it on: its create was ${made.refused.reason}` : NO_RECORD;
    return { [resource.idParam]: made.id };
  }
  const targets = ctx.targets.get(resource.name) ?? [];
  const id = target?.kind === 'owned' && targets.length ? targets[target.slot % targets.length] : undefined;
  const fallback = ctx.fixtures.get(resource.name)?.id;
  if ((id ?? fallback) !== undefined) return { [resource.idParam]: (id ?? fallback) as string };
  const refused = ctx.refusedCreates.get(resource.name);
  return refused ? `no record to try it on: its create was ${refused}` : NO_RECORD;
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
    const refused = refusalOf(subject, exchange);
    if (refused) {
      ctx.results.skip(subject.id, check, refused.reason);
      return false;
    }
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

async function afterCreate(ctx: Context, resource: Resource, created: Exchange, input: Input): Promise<void> {
  const id = idOf(resource, created);
  if (id !== undefined) {
    ctx.created.push({ resource, id, account: ctx.primary });
    ledgerOf(ctx, resource.name).created++;
  }
  try {
    await readBack(ctx, resource, created, input, id);
  } finally {
    // Done with it: deleted now, so that an account's limit (webhook endpoints) is not used up by the cases.
    if (id !== undefined) await release(ctx, resource, id);
  }
}

async function readBack(ctx: Context, resource: Resource, created: Exchange, input: Input, id: string | undefined) {
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
  const read = resource.show.responses['200']?.content['application/json'];
  const changed = differences(asDocumented(created.reply.json, read), shown.reply.json);
  const lost = unreflected(input.body?.value, recordOf(shown.reply.json, resource.idParam) ?? {});
  ctx.results.judge(
    resource.create.id,
    'created_readable',
    shown.reply.status !== 200
      ? `reading the created record answered ${shown.reply.status}`
      : changed.length
        ? `reading the created record answered other values than the create did, in ${fieldsOf(changed)}`
        : lost.length
          ? `reading the created record answered other values than the create sent, in ${fieldsOf(lost)}`
          : undefined,
    shown,
    changed.length
      ? `expected = the create's answer:\n${describeDifferences(changed)}`
      : lost.length
        ? `expected = what the create sent:\n${describeDifferences(lost)}`
        : undefined,
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
  if (gone) forget(ctx, resource, id);
}
