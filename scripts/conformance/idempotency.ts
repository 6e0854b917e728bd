// Idempotent creates, where a create documents an `Idempotency-Key` header: the same key and payload twice must
// answer the same status and body (one record: the same id), marked as a replay where the spec documents the
// marker; the same key with another payload must get 422 and create nothing.
import { randomUUID } from 'node:crypto';
import type { Resource } from '../../server/spec-model.js';
import { call } from './calls.js';
import type { Context } from './context.js';
import { differences, fieldsOf } from './diff.js';
import type { Exchange } from './http.js';
import { ledgerOf } from './records.js';
import { refusalOf } from './refusals.js';
import { idOf, is2xx } from './replies.js';
import { checkResponse } from './response-checks.js';

const HEADER = 'idempotency-key';

export async function checkIdempotency(ctx: Context): Promise<void> {
  for (const resource of ctx.model.resources) {
    if (!resource.create.headerParams.some((p) => p.name.toLowerCase() === HEADER)) continue;
    const operation = resource.create.id;
    if (ctx.stateless) {
      ctx.results.skip(operation, 'idempotent_replay', ctx.stateless);
      ctx.results.skip(operation, 'idempotency_key_reuse', ctx.stateless);
      continue;
    }
    await checkResource(ctx, resource);
  }
}

async function checkResource(ctx: Context, resource: Resource): Promise<void> {
  const operation = resource.create;
  const spares = ctx.plan.spare[operation.id] ?? [];
  const input = spares[2 % Math.max(1, spares.length)];
  // Another payload is one that asks for something else: not the same fields again, and not an empty body where a
  // create takes every field as optional (no body and `{}` ask for the same record, and a replay is then right).
  const fields = (sent: typeof input) => JSON.stringify(sent?.body?.value ?? {});
  const other =
    spares.slice(3).find((spare) => fields(spare) !== fields(input) && fields(spare) !== '{}') ??
    spares[3 % Math.max(1, spares.length)];
  const headers = { 'Idempotency-Key': `${ctx.plan.tag}-${randomUUID()}` };
  const send = async (sent: typeof input): Promise<Exchange> => {
    const exchange = await call(ctx, operation, { headers, ...(sent ? { input: sent } : {}) });
    checkResponse(ctx.results, operation, exchange);
    const id = is2xx(exchange.reply.status) ? idOf(resource, exchange) : undefined;
    if (id !== undefined && !ctx.created.some((c) => c.resource === resource && c.id === id)) {
      ctx.created.push({ resource, id, account: ctx.primary });
      ledgerOf(ctx, resource.name).created++;
    }
    return exchange;
  };

  const full = ctx.limits.get(`${resource.name}/${ctx.primary.variable}`);
  if (full) {
    ctx.results.skip(operation.id, 'idempotent_replay', full.refusal.reason);
    ctx.results.skip(operation.id, 'idempotency_key_reuse', full.refusal.reason);
    return;
  }
  const first = await send(input);
  const refused = refusalOf(operation, first);
  if (refused) {
    ctx.results.skip(operation.id, 'idempotent_replay', refused.reason);
    ctx.results.skip(operation.id, 'idempotency_key_reuse', refused.reason);
    return;
  }
  if (!is2xx(first.reply.status)) {
    const problem = `a create with an Idempotency-Key answered ${first.reply.status}`;
    ctx.results.fail(operation.id, 'idempotent_replay', problem, first);
    ctx.results.skip(operation.id, 'idempotency_key_reuse', 'the first create with a key failed');
    return;
  }
  const repeat = await send(input);
  const marker = Object.keys(operation.responses[String(first.reply.status)]?.headers ?? {}).find(
    (name) => name.toLowerCase() === 'idempotent-replayed',
  );
  // A field the spec marks `x-shown-once` (a new key's secret) is shown by the first answer only: null in a replay.
  const answered = operation.responses[String(first.reply.status)]?.content['application/json'] as
    | { properties?: Record<string, { 'x-shown-once'?: boolean }> }
    | undefined;
  const changed = differences(first.reply.json, repeat.reply.json).filter(
    (difference) => !(answered?.properties?.[difference.path]?.['x-shown-once'] === true && difference.got === null),
  );
  const replayProblem =
    repeat.reply.status !== first.reply.status
      ? `the same key and payload answered ${repeat.reply.status} the second time, ${first.reply.status} the first`
      : idOf(resource, repeat) !== idOf(resource, first)
        ? 'the same key and payload created a second record'
        : changed.length > 0
          ? `the replay's body differs from the first answer, in ${fieldsOf(changed)}`
          : marker && repeat.reply.headers[marker.toLowerCase()] !== 'true'
            ? `the replay does not say so: ${marker} is ${repeat.reply.headers[marker.toLowerCase()] ?? 'missing'}`
            : undefined;
  ctx.results.judge(operation.id, 'idempotent_replay', replayProblem, repeat);

  const reused = await send(other);
  const reuseProblem =
    reused.reply.status === 422
      ? undefined
      : `the same key with another payload answered ${reused.reply.status}, not 422${is2xx(reused.reply.status) ? ' (a record was created)' : ''}`;
  ctx.results.judge(operation.id, 'idempotency_key_reuse', reuseProblem, reused);
}
