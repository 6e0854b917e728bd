// Probes of the HTTP edge any deployment can be held to, whatever its spec: integers past every range and
// control characters in text parameters get a documented 4xx, an absolute-form request target is served like
// the origin-form, two Authorization headers are refused, and HEAD answers like GET without a body.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Operation, Schema } from '../../server/spec-model.js';
import { call, credentialOf, urlOf } from './calls.js';
import type { Context } from './context.js';
import type { Exchange, Reply, SentRequest } from './http.js';
import { pool } from './pool.js';
import { validRequestOf } from './probes.js';
import { limitation } from './profiles.js';
import { is4xx } from './replies.js';
import { checkNoServerError, checkResponse } from './response-checks.js';
import { slice } from './rotation.js';

const HUGE = '9'.repeat(400);
const CONTROL = 'a\u0000b';

const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type : [schema.type]);

/** Every integer query parameter as 400 nines, beyond any maximum and any number: a documented 4xx. */
export async function probeHugeIntegers(ctx: Context): Promise<void> {
  await probeQueryValues(
    ctx,
    'huge_integers',
    (schema) => typeOf(schema).includes('integer'),
    HUGE,
    () => true,
  );
}

/** Every free-text query parameter with a NUL in it: never a 5xx, and a 4xx where its pattern refuses it. */
export async function probeControlCharacters(ctx: Context): Promise<void> {
  await probeQueryValues(
    ctx,
    'control_characters',
    (schema) => typeOf(schema).includes('string') && schema.enum === undefined,
    CONTROL,
    (schema) => typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(CONTROL),
  );
}

async function probeQueryValues(
  ctx: Context,
  check: 'huge_integers' | 'control_characters',
  applies: (schema: Schema) => boolean,
  value: string,
  mustRefuse: (schema: Schema) => boolean,
): Promise<void> {
  const jobs = ctx.model.operations.flatMap((operation) =>
    operation.queryParams.filter((p) => applies(p.schema)).map((parameter) => ({ operation, parameter })),
  );
  await pool(jobs, ctx.concurrency, async ({ operation, parameter }) => {
    const skipped = limitation(ctx, check);
    if (skipped) return ctx.results.skip(operation.id, check, skipped);
    const { input, ids } = validRequestOf(ctx, operation);
    const query = { ...(input?.query ?? {}), [parameter.name]: value };
    const exchange = await call(ctx, operation, { ids, input: { ...(input ?? {}), query } as never });
    checkResponse(ctx.results, operation, exchange);
    const { status } = exchange.reply;
    const refuse = check === 'huge_integers' || mustRefuse(parameter.schema);
    const problem =
      status === 0 || status >= 500
        ? `${parameter.name}=${check === 'huge_integers' ? '<400 nines>' : 'a%00b'} answered ${status || 'nothing'}`
        : refuse && !is4xx(status)
          ? `${parameter.name}: a value the schema refuses answered ${status}, not 4xx`
          : undefined;
    ctx.results.judge(operation.id, check, problem, exchange);
  });
}

/** A request through node:http(s), which sends the target and the headers exactly as given. */
export function sendRaw(
  request: SentRequest & { target: string; rawHeaders: string[] },
  timeoutMs = 15_000,
): Promise<Exchange> {
  const url = new URL(request.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const failed = (error: Error): void =>
      resolve({ request, reply: { status: 0, headers: {}, text: '', error: error.message } });
    const req = send(
      url,
      // Given as an array, the headers are sent exactly so: Host too must be among them.
      {
        method: request.method,
        path: request.target,
        headers: ['Host', url.host, ...request.rawHeaders],
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', failed);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = Object.fromEntries(
            Object.entries(res.headers).map(([name, value]) => [
              name,
              Array.isArray(value) ? value.join(', ') : `${value}`,
            ]),
          );
          let json: unknown;
          try {
            json = text === '' ? undefined : JSON.parse(text);
          } catch {}
          const reply: Reply = { status: res.statusCode ?? 0, headers, text, ...(json !== undefined ? { json } : {}) };
          resolve({ request, reply });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', failed);
    req.end(request.body);
  });
}

const reads = (ctx: Context) => ctx.model.operations.filter((op) => op.method === 'GET');

/** GET with the absolute-form target (`GET http://host/path`), as proxies send it: the answer of the origin-form. */
export async function probeAbsoluteForm(ctx: Context): Promise<void> {
  const operations = slice(
    ctx,
    'absolute_form_target',
    reads(ctx),
    (op) => op.id,
    (op) => op.id,
  );
  await pool(operations, ctx.concurrency, async (operation) => {
    const skipped = limitation(ctx, 'absolute_form_target');
    if (skipped) return ctx.results.skip(operation.id, 'absolute_form_target', skipped);
    const { input, ids } = validRequestOf(ctx, operation);
    const spec = { ids, ...(input ? { input } : {}) };
    const origin = await call(ctx, operation, spec);
    const url = urlOf(ctx, operation, spec);
    const exchange = await sendRaw({
      method: 'GET',
      url,
      target: url,
      headers: { Authorization: credentialOf(operation, ctx.primary) },
      rawHeaders: credentialHeaders(ctx, operation),
    });
    ctx.results.requests++;
    checkNoServerError(ctx.results, operation.id, exchange);
    const { status } = exchange.reply;
    ctx.results.judge(
      operation.id,
      'absolute_form_target',
      status === origin.reply.status
        ? undefined
        : `absolute-form target answered ${status || 'nothing'}, origin-form ${origin.reply.status}`,
      exchange,
    );
  });
}

function credentialHeaders(ctx: Context, operation: Operation): string[] {
  return operation.security.length > 0 ? ['Authorization', credentialOf(operation, ctx.primary)] : [];
}

/** Two Authorization headers (the valid key and another, in both orders): 400 or 401, never served. */
export async function probeDuplicateCredentials(ctx: Context): Promise<void> {
  const all = ctx.model.operations.filter((op) => op.security[0]?.kind === 'bearer');
  const bearer = slice(
    ctx,
    'duplicate_credentials',
    all,
    (op) => op.id,
    (op) => op.id,
  );
  await pool(bearer, ctx.concurrency, async (operation) => {
    const skipped = limitation(ctx, 'duplicate_credentials');
    if (skipped) return ctx.results.skip(operation.id, 'duplicate_credentials', skipped);
    const { ids } = validRequestOf(ctx, operation);
    const url = urlOf(ctx, operation, { ids });
    const target = new URL(url);
    const valid = credentialOf(operation, ctx.primary);
    const other = 'Bearer conformance-not-a-key';
    for (const pair of [
      [valid, other],
      [other, valid],
    ]) {
      const exchange = await sendRaw({
        // No body: a write with two credentials must be refused before its body matters.
        method: operation.method,
        url,
        target: `${target.pathname}${target.search}`,
        headers: { Authorization: pair.join(' | ') },
        rawHeaders: ['Authorization', pair[0] as string, 'Authorization', pair[1] as string],
      });
      ctx.results.requests++;
      checkResponse(ctx.results, operation, exchange);
      const { status } = exchange.reply;
      ctx.results.judge(
        operation.id,
        'duplicate_credentials',
        status === 400 || status === 401
          ? undefined
          : `two Authorization headers answered ${status || 'nothing'}, not 400 or 401`,
        exchange,
      );
    }
  });
}

/** HEAD wherever GET is: the status and content type of GET, no body. */
export async function probeHead(ctx: Context): Promise<void> {
  const operations = slice(
    ctx,
    'head_like_get',
    reads(ctx),
    (op) => op.id,
    (op) => op.id,
  );
  await pool(operations, ctx.concurrency, async (operation) => {
    const skipped = limitation(ctx, 'head_like_get');
    if (skipped) return ctx.results.skip(operation.id, 'head_like_get', skipped);
    const { input, ids } = validRequestOf(ctx, operation);
    const spec = { ids, ...(input ? { input } : {}) };
    const get = await call(ctx, operation, spec);
    const head = await call(ctx, operation, { ...spec, method: 'HEAD' });
    checkNoServerError(ctx.results, operation.id, head);
    const problem =
      head.reply.status !== get.reply.status
        ? `HEAD answered ${head.reply.status || 'nothing'}, GET ${get.reply.status}`
        : head.reply.text !== ''
          ? `HEAD answered with a body of ${head.reply.text.length} characters`
          : head.reply.headers['content-type'] !== get.reply.headers['content-type']
            ? `HEAD has Content-Type "${head.reply.headers['content-type']}", GET "${get.reply.headers['content-type']}"`
            : undefined;
    ctx.results.judge(operation.id, 'head_like_get', problem, head);
  });
}
