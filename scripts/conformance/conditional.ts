// Conditional requests, where the spec documents them: a show with `If-None-Match` holding the ETag just
// received must answer 304 with no body; an update with `If-Match` holding a stale ETag must answer 412 and
// change nothing (while the current ETag is accepted).

import type { Operation, Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import { differences, fieldsOf } from './diff.js';
import type { Exchange } from './http.js';
import { createRecord } from './records.js';
import { recordOf } from './replies.js';
import { checkResponse } from './response-checks.js';

const documents = (operation: Operation | undefined, header: string, status: string) =>
  !!operation?.headerParams.some((p) => p.name.toLowerCase() === header) && status in operation.responses;

export async function checkConditionalRequests(ctx: Context): Promise<void> {
  for (const resource of ctx.model.resources) {
    const show = resource.show;
    if (!show) continue;
    const updates = resource.updates.filter((op) => documents(op, 'if-match', '412'));
    const notModified = documents(show, 'if-none-match', '304');
    if (!notModified && updates.length === 0) continue;
    if (ctx.stateless) {
      if (notModified) ctx.results.skip(show.id, 'not_modified', ctx.stateless);
      for (const update of updates) ctx.results.skip(update.id, 'precondition_failed', ctx.stateless);
      continue;
    }
    const created = await createRecord(ctx, resource, 4);
    if (created.id === undefined) {
      ctx.log(`conditional requests: could not create a ${resource.name} record (${created.exchange.reply.status})`);
      if (created.refused) {
        if (notModified) ctx.results.skip(show.id, 'not_modified', created.refused.reason);
        for (const update of updates) ctx.results.skip(update.id, 'precondition_failed', created.refused.reason);
      }
      continue;
    }
    const ids = { [resource.idParam]: created.id };
    const read = async (headers: Record<string, string> = {}): Promise<Exchange> => {
      const exchange = await call(ctx, show, { ids, headers });
      checkResponse(ctx.results, show, exchange);
      return exchange;
    };
    if (notModified) await checkNotModified(ctx, show, read);
    for (const [index, update] of updates.entries()) await checkStaleIfMatch(ctx, resource, update, ids, read, index);
  }
}

async function checkNotModified(
  ctx: Context,
  show: Operation,
  read: (h?: Record<string, string>) => Promise<Exchange>,
) {
  const shown = await read();
  const etag = shown.reply.headers.etag;
  if (shown.reply.status !== 200 || !etag) {
    const problem = `a show answered ${shown.reply.status} ${etag ? 'with' : 'without'} an ETag`;
    return ctx.results.fail(show.id, 'not_modified', problem, shown);
  }
  const again = await read({ 'If-None-Match': etag });
  const problem =
    again.reply.status !== 304
      ? `If-None-Match with the ETag just received answered ${again.reply.status}, not 304`
      : again.reply.text !== ''
        ? 'the 304 carried a body'
        : undefined;
  ctx.results.judge(show.id, 'not_modified', problem, again);
}

async function checkStaleIfMatch(
  ctx: Context,
  resource: Resource,
  update: Operation,
  ids: Record<string, string>,
  read: (h?: Record<string, string>) => Promise<Exchange>,
  round: number,
) {
  const inputs = (ctx.plan.spare[update.id] ?? []).filter(
    (input) => input.body && Object.keys(input.body.value as object).length > 0,
  );
  const before = await read();
  const etag = before.reply.headers.etag;
  if (!etag) return ctx.results.fail(update.id, 'precondition_failed', 'a show answered without an ETag', before);
  // An update to the values the record already has may keep its ETag (nothing changed): the first update sent
  // is one that changes a field, so that the ETag it leaves behind is stale for certain.
  const shown = recordOf(before.reply.json, resource.idParam) ?? {};
  const rotated = [...inputs.slice((2 * round) % Math.max(1, inputs.length)), ...inputs];
  const first = rotated.find((input) =>
    Object.entries(input.body?.value as object).some(([field, value]) => shown[field] !== value),
  );
  const second = rotated.find((input) => input !== first);
  const current = await call(ctx, update, { ids, headers: { 'If-Match': etag }, ...(first ? { input: first } : {}) });
  checkResponse(ctx.results, update, current);
  if (current.reply.status !== 200) {
    const problem = `an update with the current ETag in If-Match answered ${current.reply.status}, not 200`;
    return ctx.results.fail(update.id, 'precondition_failed', problem, current);
  }
  const after = await read();
  if (after.reply.headers.etag === etag) {
    if (differences(before.reply.json, after.reply.json).length === 0) {
      return ctx.results.skip(
        update.id,
        'precondition_failed',
        'no spare input changed the record, so no ETag went stale',
      );
    }
    return ctx.results.fail(update.id, 'precondition_failed', 'an update that changed the record kept its ETag', after);
  }
  const stale = await call(ctx, update, { ids, headers: { 'If-Match': etag }, ...(second ? { input: second } : {}) });
  checkResponse(ctx.results, update, stale);
  const unchanged = differences(after.reply.json, (await read()).reply.json);
  const problem =
    stale.reply.status !== 412
      ? `an update with a stale ETag in If-Match answered ${stale.reply.status}, not 412`
      : unchanged.length > 0
        ? `the refused update changed the ${resource.name} record anyway, in ${fieldsOf(unchanged)}`
        : undefined;
  ctx.results.judge(update.id, 'precondition_failed', problem, stale);
}
