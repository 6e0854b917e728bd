// Peer: the Fastify app a team would write from the same spec the ordinary way, answering like the service with
// its SQL (same-answers.ts). Per request: Fastify's pino logger (info: its two lines per request), @fastify/helmet's
// headers, @fastify/formbody for forms (JSON built in), the key lookup (the spec's bearerAuth security handler),
// @fastify/rate-limit (in memory, keyed by API key), the routes and schemas fastify-openapi-glue builds from the
// spec (request validation by Ajv, responses serialised by fast-json-stringify from the response schemas), an
// error handler that answers problem+json (422 for a bad field, as the service). Run by `npm run bench`: PORT,
// DATABASE_FILE.
import { readFileSync } from 'node:fs';
import formbody from '@fastify/formbody';
import helmet from '@fastify/helmet';
import rateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import openapiGlue from 'fastify-openapi-glue';
import { type Answer, sameAnswers } from './same-answers.js';

const answers = sameAnswers(process.env.DATABASE_FILE as string);
const specification = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));

declare module 'fastify' {
  interface FastifyRequest {
    accountId: number;
  }
}

// The spec declares each HEAD itself (served by the GET's handler), so Fastify must not add its own.
const app = Fastify({
  logger: { level: 'info' },
  exposeHeadRoutes: false,
  ajv: {
    // Fastify's defaults strip unknown fields (removeAdditional): the spec's additionalProperties: false rejects them.
    customOptions: { strict: false, removeAdditional: false },
  },
});
await app.register(helmet);
await app.register(formbody);
await app.register(rateLimit, {
  max: Number(process.env.RATE_LIMIT_REQUESTS ?? 999_999_999),
  timeWindow: 60_000,
  keyGenerator: (request) => request.headers.authorization ?? request.ip,
});

const send = (reply: FastifyReply, answer: Answer) => {
  if (answer.etag) reply.header('ETag', answer.etag);
  if (answer.location) reply.header('Location', answer.location);
  reply.code(answer.status);
  // A 204 has no body: sent as is (an async handler may not resolve to undefined).
  if (answer.body === undefined) return reply.send();
  // A problem carries the request's id, as the spec's problem schema requires (fast-json-stringify refuses one without).
  if (answer.status >= 400) {
    reply.type('application/problem+json');
    return { ...(answer.body as object), request_id: String(reply.request.id) };
  }
  return answer.body;
};
type Req = FastifyRequest<{ Params: { id: number }; Querystring: Record<string, unknown>; Body: { name: string } }>;
const sent = (request: FastifyRequest) =>
  Object.fromEntries(new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1 || request.url.length)));

const list = async (request: Req, reply: FastifyReply) =>
  send(reply, await answers.list(request.accountId, request.query, sent(request)));
const events = async (request: Req, reply: FastifyReply) =>
  send(reply, await answers.events(request.accountId, request.query, sent(request)));
const show = async (request: Req, reply: FastifyReply) =>
  send(reply, answers.show(request.accountId, request.params.id));
const update = async (request: Req, reply: FastifyReply) =>
  send(reply, answers.update(request.accountId, request.params.id, request.body));
const service = {
  spaces_list: list,
  spaces_list_head: list,
  spaces_show: show,
  spaces_show_head: show,
  spaces_store: async (request: Req, reply: FastifyReply) =>
    send(reply, answers.store(request.accountId, request.body)),
  spaces_update: update,
  spaces_patch: update,
  spaces_delete: async (request: Req, reply: FastifyReply) =>
    send(reply, answers.delete(request.accountId, request.params.id)),
  events_list: events,
  events_list_head: events,
};
const security = {
  bearerAuth(request: FastifyRequest) {
    const accountId = answers.authenticate(request.headers.authorization);
    if (accountId === undefined) throw Object.assign(new Error('Missing or unknown API key.'), { statusCode: 401 });
    request.accountId = accountId;
  },
};

type Failure = {
  statusCode?: number;
  message: string;
  validation?: Array<{ instancePath: string; params: Record<string, unknown>; message?: string }>;
  validationContext?: string;
};
// The problem's shape is the spec's (fast-json-stringify serialises it from the 4xx response schemas).
app.setErrorHandler((error: Failure, request, reply) => {
  const status = error.validation ? 422 : (error.statusCode ?? 500);
  const location = error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
  const field = (e: { instancePath: string; params: Record<string, unknown> }) =>
    e.instancePath.slice(1) || String(e.params.missingProperty ?? e.params.additionalProperty ?? '');
  reply
    .code(status)
    .type('application/problem+json')
    .send({
      type: status === 422 ? '/problems/validation' : '/problems/error',
      title: status === 422 ? 'Unprocessable Content' : status === 401 ? 'Unauthorized' : 'Error',
      status,
      detail: error.message,
      request_id: String(request.id),
      ...(error.validation && {
        errors: error.validation.map((e) => ({ location, field: field(e), message: e.message ?? 'is invalid' })),
      }),
    });
});
await app.register(openapiGlue, {
  specification,
  serviceHandlers: service,
  securityHandlers: security,
  prefix: '/api/v1',
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
// The bench's SIGTERM ends the process normally, so that `node --cpu-prof` writes its profile (bench:profile).
process.once('SIGTERM', () => process.exit(0));
