// OpenTelemetry tracing, loaded before the service (scripts/start.mjs imports it first when an OTEL_ variable asks
// for traces; `node --import ./scripts/tracing.mjs scripts/start.mjs` does the same): the ESM loader hook, so that
// node:http is patched in the modules the service imports, then the SDK with the http, pg and redis instrumentations.
// Configured by the standard variables only (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*, OTEL_SDK_DISABLED). Spans wait in a bounded queue and are exported in
// batches, one export at a time: a collector that is down or slow costs dropped spans (counted, read by the
// service's metrics and its once-a-minute warning through TRACING_STATE), never a request's time or memory.
import { register } from 'node:module';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { tracingConfigured } from './tracing-configured.mjs';

/** Where the service reads what this file set up (server/tracing.ts). */
const TRACING_STATE = Symbol.for('domain-space-service.tracing');

/** A context in which nothing is traced. */
const untraced = () => suppressTracing(ROOT_CONTEXT);

const number = (value, fallback) => (/^\d+$/.test(value ?? '') && Number(value) > 0 ? Number(value) : fallback);

/** The exporter OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL names (http/protobuf by default, as the specification says). */
async function otlpExporter(env) {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ||
    env.OTEL_EXPORTER_OTLP_PROTOCOL ||
    'http/protobuf'
  ).trim();
  if (protocol === 'http/json')
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  if (protocol === 'grpc') return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

/**
 * The batch span processor's bounds (OTEL_BSP_MAX_QUEUE_SIZE, _MAX_EXPORT_BATCH_SIZE, _SCHEDULE_DELAY), with the
 * spans it drops counted: the SDK's BatchSpanProcessor drops the same way but tells no one how many.
 */
function boundedProcessor(exporter, env) {
  const maxQueue = number(env.OTEL_BSP_MAX_QUEUE_SIZE, 2048);
  const maxBatch = Math.min(number(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512), maxQueue);
  const delayMs = number(env.OTEL_BSP_SCHEDULE_DELAY, 5000);
  const exportTimeoutMs = number(env.OTEL_BSP_EXPORT_TIMEOUT, 30_000);
  let queue = [];
  let dropped = 0;
  let exporting;
  let timer;

  const exportBatch = () =>
    new Promise((resolve) => {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      let settled = false;
      const settle = (ok) => {
        if (settled) return;
        settled = true;
        clearTimeout(giveUp);
        if (!ok) dropped += batch.length;
        resolve();
      };
      const giveUp = setTimeout(() => settle(false), exportTimeoutMs);
      giveUp.unref();
      try {
        // Outside any span, and untraced: the export's own HTTP request is no span of the service's.
        context.with(untraced(), () => exporter.export(batch, (result) => settle(result.code === 0)));
      } catch {
        settle(false);
      }
    });

  /** Exports what is queued, a batch at a time, never two exports at once. */
  const drain = () => {
    exporting ??= (async () => {
      while (queue.length > 0) await exportBatch();
    })().finally(() => {
      exporting = undefined;
    });
    return exporting;
  };

  const schedule = () => {
    if (timer) return;
    timer = context.with(untraced(), () =>
      setTimeout(() => {
        timer = undefined;
        drain();
      }, delayMs),
    );
    timer.unref();
  };

  return {
    dropped: () => dropped,
    processor: {
      onStart() {},
      onEnd(span) {
        if ((span.spanContext().traceFlags & 1) === 0) return;
        if (queue.length >= maxQueue) {
          dropped++;
          return;
        }
        queue.push(span);
        if (queue.length >= maxBatch && !exporting) context.with(untraced(), drain);
        else schedule();
      },
      async forceFlush() {
        await drain();
      },
      async shutdown() {
        clearTimeout(timer);
        await drain();
        await exporter.shutdown();
      },
    },
  };
}

/** While above 0, nothing is traced (the start's warm-up). */
let quiet = 0;

async function start(env) {
  // The stable semantic conventions of HTTP and databases (the instrumentations' default in this release too).
  env.OTEL_SEMCONV_STABILITY_OPT_IN ??= 'http,database';
  // Traces only: no metrics or logs are sent unless asked for (Prometheus scrapes the metrics).
  env.OTEL_METRICS_EXPORTER ??= 'none';
  env.OTEL_LOGS_EXPORTER ??= 'none';
  const ownName = /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? '');
  if (!env.OTEL_SERVICE_NAME && !ownName) env.OTEL_SERVICE_NAME = 'domain-space-service';

  // The hook wraps only what an instrumentation patches through ESM imports (node:http's named exports, which the
  // webhook sender imports): every other module loads as it would without tracing (pg and redis are patched
  // through require).
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, {
    data: { include: ['node:http', 'node:https', 'http', 'https'] },
  });
  const [{ NodeSDK }, { HttpInstrumentation }, { PgInstrumentation }, { RedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-redis'),
  ]);
  const { processor, dropped } = boundedProcessor(await otlpExporter(env), env);
  const sdk = new NodeSDK({
    spanProcessors: [processor],
    instrumentations: [
      new HttpInstrumentation({
        // The API's requests are traced; the health checks, /metrics and the docs would only be noise.
        // The warm-up's requests before the service listens (server/warm-up.ts) are no one's either.
        ignoreIncomingRequestHook: (request) => quiet > 0 || !/^\/api\/v1(?:[/?]|$)/.test(request.url ?? ''),
        // An outgoing request is traced only inside a span of ours (a webhook delivery), never on its own.
        requireParentforOutgoingSpans: true,
      }),
      // A query outside any span (the jobs' claims, polled) is not traced: each unit of work is a span.
      // db.operation.name too, as the SQLite spans have it (the first keyword of the statement).
      new PgInstrumentation({
        requireParentSpan: true,
        requestHook: (span, { query }) => {
          const operation = /^\s*([A-Za-z]+)/.exec(query.text ?? '')?.[1];
          if (operation) span.setAttribute('db.operation.name', operation.toUpperCase());
        },
      }),
      // Redis (REDIS_URL: the shared rate-limit counters), inside a request's span only, and of each command its
      // name alone: its arguments are counters' keys and values, nothing an operator needs in a trace.
      new RedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  // `flush`: the service's drain sends the spans still queued before it exits.
  // `untraced`: the start's warm-up requests (server/warm-up.ts) are no one's.
  globalThis[TRACING_STATE] = {
    droppedSpans: dropped,
    flush: () => processor.forceFlush().catch(() => {}),
    untraced: async (work) => {
      quiet++;
      try {
        return await context.with(untraced(), work);
      } finally {
        quiet--;
      }
    },
  };
}

if (tracingConfigured(process.env)) await start(process.env);
