// Tracing as an operator turns it on: the service as `npm start` runs it, with WORKERS=2, on the engine under test,
// exporting to a collector of the test's own (OTLP/HTTP JSON on loopback). A request's server span continues the
// caller's traceparent, is named and labelled from the spec, has its SQL as children and the webhook delivery its
// change caused in the same trace; the delivery carries that trace's traceparent; the log lines carry the ids;
// and no secret the test sent or the service made is in any span.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { type Database, openDatabase } from '../../server/db/database.js';
import { type Running, runScript, SERVICE, stopAll } from '../service/process.js';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { type ExportedSpan, type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.js';
import { REDIS_URL, uniquePrefix } from '../support/redis.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

let database: TestDatabase;
let db: Database;
let server: Running;
let collector: OtlpReceiver;
let receiver: Receiver;
let api: string;
let key: string;
let webhookSecret: string;
const bodyMarker = `body-marker-${Date.now()}`;

beforeAll(async () => {
  database = await freshDatabase();
  collector = await startOtlpReceiver();
  receiver = await startReceiver();
  server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    WORKERS: '2',
    LOG_LEVEL: 'info',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    // The per-key quota counted in Redis: its commands are spans of the request too.
    REDIS_URL,
    REDIS_PREFIX: uniquePrefix(),
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  const [, origin] = await server.waitForOutput(/listening on (http:\/\/127\.0\.0\.1:\d+)/, 110_000);
  api = `${origin}/api/v1`;
  db = openDatabase(database.url);
  key = (await issueKey(db, 'tracing')).key;
  const endpoint = await call('POST', '/webhook-endpoints', { url: receiver.url, enabled_events: ['space.created'] });
  expect(endpoint.status).toBe(201);
  webhookSecret = ((await endpoint.json()) as { secret: string }).secret;
}, 150_000);

afterAll(async () => {
  await stopAll();
  await db?.destroy();
  await database?.drop();
  await collector?.close();
  await receiver?.close();
});

function call(method: string, path: string, body?: object, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${api}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    body: body ? JSON.stringify(body) : undefined,
  });
}

const serverSpan = (spans: ExportedSpan[], requestId: string) =>
  spans.find((span) => span.kind === 2 && span.attributes['dss.request.id'] === requestId);

/** The service's JSON log lines (stdout) that are request lines. */
const requestLines = () =>
  server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === 'request');

describe('a change, followed from the request to the receiver', () => {
  let created: Response;
  let requestId: string;

  beforeAll(async () => {
    created = await call(
      'POST',
      '/spaces',
      { name: bodyMarker, color: 3 },
      { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` },
    );
    requestId = created.headers.get('x-request-id') ?? '';
  }, 120_000);

  it('continues the caller’s trace in a server span named from the spec', async () => {
    expect(created.status).toBe(201);
    const spans = await collector.until((all) => serverSpan(all, requestId) !== undefined);
    const span = serverSpan(spans, requestId) as ExportedSpan;
    expect(span.traceId).toBe(CALLER_TRACE);
    expect(span.parentSpanId).toBe(CALLER_SPAN);
    expect(span.name).toBe('POST /api/v1/spaces');
    expect(span.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/api/v1/spaces',
      'http.response.status_code': 201,
      'url.path': '/api/v1/spaces',
      'url.scheme': 'http',
      'server.address': '127.0.0.1',
      'client.address': '127.0.0.1',
      'dss.operation.id': 'spaces_store',
    });
    expect(span.attributes['dss.account.id']).toBeTypeOf('number');
    expect(span.attributes['server.port']).toBeTypeOf('number');
    expect(span.attributes['user_agent.original']).toBeTypeOf('string');
    expect(span.resource['service.name']).toBe('domain-space-service');
  });

  it('has the SQL it ran as children, with placeholders for the values', async () => {
    const spans = await collector.until((all) =>
      all.some((span) => span.traceId === CALLER_TRACE && span.attributes['db.operation.name'] === 'INSERT'),
    );
    const parent = serverSpan(spans, requestId) as ExportedSpan;
    const queries = spans.filter(
      (span) =>
        span.traceId === CALLER_TRACE &&
        span.attributes['db.query.text'] &&
        span.attributes['db.system.name'] !== 'redis',
    );
    expect(queries.length).toBeGreaterThan(0);
    for (const query of queries) {
      expect(query.attributes['db.system.name']).toBe(database.url.startsWith('sqlite') ? 'sqlite' : 'postgresql');
      expect(String(query.attributes['db.query.text'])).not.toContain(bodyMarker);
    }
    const insert = queries.find((span) => /insert into "spaces"/i.test(String(span.attributes['db.query.text'])));
    expect(insert?.parentSpanId).toBe(parent.spanId);
    // SQLite's group COMMIT, which may serve several requests' writes: one span, outside their traces, linked to
    // each write's span (here the request's).
    if (database.url.startsWith('sqlite')) {
      const all = await collector.until((each) =>
        each.some((span) => span.name === 'COMMIT sqlite' && span.links?.some((link) => link.spanId === parent.spanId)),
      );
      const commit = all.find((span) => span.links?.some((link) => link.spanId === parent.spanId)) as ExportedSpan;
      expect(commit.traceId).not.toBe(CALLER_TRACE);
      expect(commit.attributes['dss.group.writes']).toBeGreaterThanOrEqual(1);
    }
    // The rate limit's Redis commands: children too, each named by its command alone.
    const redis = spans.filter(
      (span) => span.traceId === CALLER_TRACE && span.attributes['db.system.name'] === 'redis',
    );
    expect(redis.length).toBeGreaterThan(0);
    for (const command of redis) expect(String(command.attributes['db.query.text'])).toMatch(/^[A-Za-z]+$/);
  });

  it('delivers the webhook in the same trace, with its traceparent', async () => {
    const [delivery] = await receiver.until((all) => all.length > 0, 30_000);
    const traceparent = String(delivery?.headers.traceparent ?? '');
    expect(traceparent).toMatch(new RegExp(`^00-${CALLER_TRACE}-[0-9a-f]{16}-01$`));
    const spans = await collector.until((all) =>
      all.some((span) => span.traceId === CALLER_TRACE && span.name === 'webhook delivery attempt'),
    );
    const attempt = spans.find((span) => span.name === 'webhook delivery attempt') as ExportedSpan;
    expect(attempt.attributes['http.response.status_code']).toBe(200);
    // The delivery's HTTP request is the attempt's child, and the receiver was told that request's span.
    await collector.until((all) => all.some((span) => span.parentSpanId === attempt.spanId && span.kind === 3));
    const sent = collector.spans.find((span) => span.parentSpanId === attempt.spanId && span.kind === 3);
    expect(traceparent.split('-')[2]).toBe(sent?.spanId);
  });

  it('writes the trace and span ids in the request’s log line, beside its request id', async () => {
    const spans = await collector.until((all) => serverSpan(all, requestId) !== undefined);
    const span = serverSpan(spans, requestId) as ExportedSpan;
    const line = requestLines().find((each) => each.request_id === requestId);
    expect(line).toMatchObject({ trace_id: CALLER_TRACE, span_id: span.spanId, request_id: requestId });
  });
});

describe('a request without a traceparent', () => {
  it('starts a trace of its own, labelled with the template and, on a 4xx, the problem type', async () => {
    const missing = await call('GET', '/spaces/987654');
    expect(missing.status).toBe(404);
    const requestId = missing.headers.get('x-request-id') ?? '';
    const spans = await collector.until((all) => serverSpan(all, requestId) !== undefined);
    const span = serverSpan(spans, requestId) as ExportedSpan;
    expect(span.traceId).not.toBe(CALLER_TRACE);
    expect(span.parentSpanId).toBe('');
    expect(span.name).toBe('GET /api/v1/spaces/{id}');
    expect(span.attributes).toMatchObject({
      'http.route': '/api/v1/spaces/{id}',
      'url.path': '/api/v1/spaces/987654',
      'dss.operation.id': 'spaces_show',
      'dss.problem.type': '/problems/not-found',
      'http.response.status_code': 404,
    });
  });

  it('traces nothing outside the API (health checks)', async () => {
    expect((await fetch(`${api.replace(/\/api\/v1$/, '')}/healthz`)).status).toBe(200);
    const before = collector.spans.length;
    await call('GET', '/spaces');
    await collector.until((all) => all.length > before);
    expect(collector.spans.some((span) => String(span.attributes['url.path']).startsWith('/healthz'))).toBe(false);
  });
});

describe('the start', () => {
  const lines = () =>
    server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

  it('logs each migration applied, with its duration', () => {
    const applied = lines().filter((line) => line.msg === 'migration applied');
    expect(applied.map((line) => line.migration)).toContain('0015_trace_context');
    for (const line of applied) expect(line.duration_ms).toBeTypeOf('number');
  });

  it('says which release runs, and warns of a development setting left on', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(lines().find((line) => line.msg === 'listening')).toMatchObject({
      level: 'warn',
      version,
      commit: expect.stringMatching(/^([0-9a-f]{40}|unknown)$/),
      development_settings: ['WEBHOOK_ALLOW_PRIVATE_TARGETS=1'],
    });
  });
});

describe('secrets', () => {
  it('are in no exported span: the key, its secret, the webhook secret, the signature, a body', async () => {
    const [delivery] = await receiver.until((all) => all.length > 0, 30_000);
    const signature =
      String(delivery?.headers['webhook-signature'] ?? '')
        .split(' ')[0]
        ?.split(',')[1] ?? '';
    expect(signature.length).toBeGreaterThan(20);
    await collector.until((all) => all.some((span) => span.name === 'webhook delivery attempt'));
    const exported = collector.bodies.join('\n');
    const keySecret = key.split('_').slice(2).join('_');
    for (const secret of [key, keySecret, webhookSecret, webhookSecret.replace(/^whsec_/, ''), signature, bodyMarker]) {
      expect(secret.length).toBeGreaterThan(10);
      expect(exported).not.toContain(secret);
    }
  });
});
