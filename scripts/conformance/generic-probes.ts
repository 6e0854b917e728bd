// Probes any deployment can be held to, whatever its spec: an over-long path gets a 4xx problem about as fast as
// a short one (never a 5xx), `Accept: application/problem+json` (what a spec-driven tool sends for an operation
// whose only body is a problem) is never refused with 406, and two Idempotency-Key headers are refused with 400.
import { randomUUID } from 'node:crypto';
import type { Operation } from '../../server/spec-model.js';
import { call, credentialOf, urlOf } from './calls.js';
import type { Context } from './context.js';
import { sendRaw } from './edge-probes.js';
import type { Exchange } from './http.js';
import { encodeBody } from './inputs.js';
import { pool } from './pool.js';
import { validRequestOf } from './probes.js';
import { limitation } from './profiles.js';
import { idOf, is2xx, is4xx } from './replies.js';
import { checkNoServerError, checkResponse } from './response-checks.js';
import { slice } from './rotation.js';

/** Characters past the path: 16,000 (what fits in Node's default 16 KiB of headers), well past any real path. */
const LONG = 16_000;
/** How much longer than a short unknown path an over-long one may take to be answered (best of 3 each). */
const LONG_PATH_SLACK_MS = 100;
const PROBLEM_JSON = /^application\/problem\+json/;

/** Per collection path: 16,000 slashes then "x", and one segment of 16,000 letters, each a 4xx problem, fast. */
export async function probeLongPaths(ctx: Context): Promise<void> {
  const all = [...new Set(ctx.model.resources.map((resource) => resource.collectionPath))];
  const paths = slice(
    ctx,
    'long_path',
    all,
    (path) => path,
    (path) => path,
  );
  // One after another: the times are compared, so they must not wait for each other.
  for (const path of paths) {
    const operation = ctx.model.operations.find((op) => op.path === path && op.method === 'GET');
    if (!operation) continue;
    const base = urlOf(ctx, operation, {});
    const timed = async (url: string) => {
      const target = new URL(url);
      const started = performance.now();
      const exchange = await sendRaw({
        method: 'GET',
        url,
        target: `${target.pathname}${target.search}`,
        headers: { Authorization: credentialOf(operation, ctx.primary) },
        rawHeaders: operation.security.length > 0 ? ['Authorization', credentialOf(operation, ctx.primary)] : [],
      });
      ctx.results.requests++;
      return { exchange, ms: performance.now() - started };
    };
    const bestOf3 = async (url: string) => {
      const tries = [await timed(url), await timed(url), await timed(url)];
      return tries.reduce((best, next) => (next.ms < best.ms ? next : best));
    };
    const short = await bestOf3(`${base}/x/y`);
    const untimed = limitation(ctx, 'long_path', 'timing');
    if (untimed) ctx.results.skip(path, 'long_path', untimed);
    for (const [variant, suffix] of [
      ['slashes', `${'/'.repeat(LONG)}x`],
      ['segment', `/${'a'.repeat(LONG)}`],
    ] as const) {
      const long = await bestOf3(`${base}${suffix}`);
      checkNoServerError(ctx.results, path, long.exchange);
      const { status, headers } = long.exchange.reply;
      const problem = !is4xx(status)
        ? `a path ${LONG} characters longer (${variant}) answered ${status || 'nothing'}, not 4xx`
        : !PROBLEM_JSON.test(headers['content-type'] ?? '')
          ? `a path ${LONG} characters longer (${variant}) answered ${status} as "${headers['content-type'] ?? 'no content type'}", not application/problem+json`
          : !untimed && long.ms > short.ms + LONG_PATH_SLACK_MS
            ? `a path ${LONG} characters longer (${variant}) took ${long.ms.toFixed(0)} ms, a short unknown one ${short.ms.toFixed(0)} ms (best of 3 each): its cost grows with its length`
            : undefined;
      ctx.results.judge(path, 'long_path', problem, long.exchange);
    }
  }
}

/** Every operation with `Accept: application/problem+json`: served (or refused for another reason), never 406. */
export async function probeProblemAccept(ctx: Context): Promise<void> {
  const operations = slice(
    ctx,
    'problem_accept',
    ctx.model.operations,
    (op) => op.id,
    (op) => op.id,
  );
  await pool(operations, ctx.concurrency, async (operation) => {
    const skipped = limitation(ctx, 'problem_accept');
    if (skipped) return ctx.results.skip(operation.id, 'problem_accept', skipped);
    const exchange = await call(ctx, operation, {
      ...harmlessRequestOf(ctx, operation),
      headers: { Accept: 'application/problem+json' },
    });
    checkResponse(ctx.results, operation, exchange);
    const { status } = exchange.reply;
    ctx.results.judge(
      operation.id,
      'problem_accept',
      status === 406 ? 'Accept: application/problem+json answered 406' : undefined,
      exchange,
    );
  });
}

/**
 * A request that changes nothing: a read as the valid cases send it; a write to an id no run made; a create
 * without its body. Each gets its usual answer, or a 4xx, unless the Accept header is refused first.
 */
function harmlessRequestOf(ctx: Context, operation: Operation) {
  if (operation.method === 'GET' || operation.method === 'HEAD') {
    const { input, ids } = validRequestOf(ctx, operation);
    return { ids, ...(input ? { input } : {}) };
  }
  const ids = Object.fromEntries(
    operation.pathParams.map((param) => {
      const types = Array.isArray(param.schema.type) ? param.schema.type : [param.schema.type];
      return [param.name, types.includes('integer') ? '1000000000000' : `${ctx.plan.tag}-absent`];
    }),
  );
  return { ids };
}

/** Where a create documents Idempotency-Key: the same valid create with two of them gets 400 and creates nothing. */
export async function probeDuplicateIdempotencyKeys(ctx: Context): Promise<void> {
  for (const resource of ctx.model.resources) {
    const operation = resource.create;
    if (!operation.headerParams.some((p) => p.name.toLowerCase() === 'idempotency-key')) continue;
    const skipped = limitation(ctx, 'duplicate_idempotency_key');
    if (skipped) {
      ctx.results.skip(operation.id, 'duplicate_idempotency_key', skipped);
      continue;
    }
    const { input } = validRequestOf(ctx, operation);
    const body = input?.body ? encodeBody(input.body.mediaType, input.body.value) : undefined;
    const url = urlOf(ctx, operation, {});
    const target = new URL(url);
    const credential = credentialOf(operation, ctx.primary);
    // Keys of their own: joined by a server that reads them as one ("a, b"), they must not meet an earlier use.
    const [first, second] = [`${ctx.plan.tag}-${randomUUID()}`, `${ctx.plan.tag}-${randomUUID()}`];
    const exchange: Exchange = await sendRaw({
      method: operation.method,
      url,
      target: `${target.pathname}${target.search}`,
      headers: {
        Authorization: credential,
        'Idempotency-Key': `${first}, ${second}`,
        ...(body?.contentType ? { 'Content-Type': body.contentType } : {}),
      },
      rawHeaders: [
        ...(operation.security.length > 0 ? ['Authorization', credential] : []),
        ...['Idempotency-Key', first, 'Idempotency-Key', second],
        ...(body?.contentType ? ['Content-Type', body.contentType] : []),
      ],
      ...(body ? { body: body.text } : {}),
    });
    ctx.results.requests++;
    checkResponse(ctx.results, operation, exchange);
    const { status } = exchange.reply;
    const id = is2xx(status) ? idOf(resource, exchange) : undefined;
    if (id !== undefined) ctx.created.push({ resource, id, account: ctx.primary });
    ctx.results.judge(
      operation.id,
      'duplicate_idempotency_key',
      status === 400 ? undefined : `two Idempotency-Key headers answered ${status || 'nothing'}, not 400`,
      exchange,
    );
  }
}
