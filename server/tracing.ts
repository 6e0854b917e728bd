// The service's side of tracing: spans and their attributes named through the OpenTelemetry API, which is read
// only when scripts/tracing.mjs started the SDK before the service loaded (an OTEL_ variable asked for traces).
// Without it every function here answers "no trace" at the cost of one property read, and no OpenTelemetry code
// is loaded. What leaves in a span is named here and by the instrumentations (http, pg): ids, templates, SQL text
// with placeholders; never a header's value, a key, a secret, a signature or a body.
import { createRequire } from 'node:module';
import type * as Api from '@opentelemetry/api';

const TRACING_STATE = Symbol.for('domain-space-service.tracing');

export type SpanContext = Api.SpanContext;

interface TracingState {
  droppedSpans(): number;
  flush(): Promise<void>;
  untraced<T>(work: () => Promise<T>): Promise<T>;
}

export interface Tracing {
  api: typeof Api;
  tracer: Api.Tracer;
  state: TracingState;
}

let loaded: Tracing | null | undefined;

/** The tracing API when the SDK runs in this process, else undefined. */
export function tracing(): Tracing | undefined {
  if (loaded === undefined) {
    const state = (globalThis as Record<symbol, TracingState | undefined>)[TRACING_STATE];
    if (state) {
      const api = createRequire(import.meta.url)('@opentelemetry/api') as typeof Api;
      loaded = { api, tracer: api.trace.getTracer('domain-space-service'), state };
    } else {
      loaded = null;
    }
  }
  return loaded ?? undefined;
}

/** The trace and span ids of the span in effect, for a log line (pino's mixin in logger.ts). */
export function traceFields(): { trace_id: string; span_id: string } | Record<string, never> {
  const span = tracing()?.api.trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The W3C traceparent of the span in effect (kept with an event, so that its deliveries join the trace). */
export function currentTraceparent(): string | null {
  const t = tracing();
  if (!t?.api.trace.getActiveSpan()) return null;
  const carrier: Record<string, string> = {};
  t.api.propagation.inject(t.api.context.active(), carrier);
  return carrier.traceparent ?? null;
}

export interface SpanOptions {
  /** A traceparent to continue (a delivery's event was written in that trace); else the span in effect, or none. */
  parent?: string | null;
  attributes?: Api.Attributes;
  kind?: 'internal' | 'client' | 'producer' | 'consumer';
  /** Start the span only inside another (a database query outside any unit of work is not traced). */
  requireParent?: boolean;
}

/** Runs `work` in a span named `name` when tracing is on (ended when it settles; a throw marks it failed). */
export async function inSpan<T>(
  name: string,
  options: SpanOptions,
  work: (span: Api.Span | undefined) => Promise<T>,
): Promise<T> {
  const t = tracing();
  if (!t) return work(undefined);
  const { api } = t;
  let parent = api.context.active();
  if (options.parent) parent = api.propagation.extract(api.ROOT_CONTEXT, { traceparent: options.parent });
  if (options.requireParent && !api.trace.getSpan(parent)) return work(undefined);
  const kind = { internal: 0, client: 2, producer: 3, consumer: 4 }[options.kind ?? 'internal'] as Api.SpanKind;
  return t.tracer.startActiveSpan(name, { kind, attributes: options.attributes ?? {} }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.setStatus({ code: api.SpanStatusCode.ERROR });
      span.setAttribute('error.type', error instanceof Error ? error.constructor.name : 'Error');
      if (typeof error === 'object' && error !== null) {
        const { traceId, spanId } = span.spanContext();
        failedIn.set(error, { trace_id: traceId, span_id: spanId });
      }
      throw error;
    } finally {
      span.end();
    }
  });
}

/** The span each error thrown out of inSpan ended, so that whoever logs it later names that span. */
const failedIn = new WeakMap<object, { trace_id: string; span_id: string }>();

/** The trace and span ids of the span `error` was thrown out of, for its log line (none when untraced). */
export function traceFieldsOf(error: unknown): { trace_id: string; span_id: string } | Record<string, never> {
  return (typeof error === 'object' && error !== null && failedIn.get(error)) || {};
}

/** The first keyword of a statement (`SELECT`, `INSERT`, `WITH`…): db.operation.name. */
export const sqlOperation = (text: string): string => /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'QUERY';

/** A span for one SQL statement: its text with placeholders, never a parameter's value. */
export function querySpan<T>(system: string, text: string, run: () => Promise<T>): Promise<T> {
  if (!tracing()) return run();
  const operation = sqlOperation(text);
  return inSpan(
    `${operation} ${system}`,
    {
      kind: 'client',
      requireParent: true,
      attributes: { 'db.system.name': system, 'db.operation.name': operation, 'db.query.text': text },
    },
    run,
  );
}

/** The span in effect, to link to later (a write's, from the group commit that makes it durable). */
export function currentSpanContext(): Api.SpanContext | undefined {
  return tracing()?.api.trace.getActiveSpan()?.spanContext();
}

/**
 * One statement that serves several traced units (a group COMMIT on SQLite): a span of its own, outside their
 * traces, linked to each of their spans; `run` is synchronous.
 */
export function linkedQuerySpan<T>(system: string, text: string, links: Api.SpanContext[], run: () => T): T {
  const t = tracing();
  if (!t || links.length === 0) return run();
  const operation = sqlOperation(text);
  const span = t.tracer.startSpan(`${operation} ${system}`, {
    kind: t.api.SpanKind.CLIENT,
    root: true,
    links: links.map((context) => ({ context })),
    attributes: {
      'db.system.name': system,
      'db.operation.name': operation,
      'db.query.text': text,
      'dss.group.writes': links.length,
    },
  });
  try {
    return run();
  } catch (error) {
    span.setStatus({ code: t.api.SpanStatusCode.ERROR });
    span.setAttribute('error.type', error instanceof Error ? error.constructor.name : 'Error');
    throw error;
  } finally {
    span.end();
  }
}

/** Spans the exporter could not send (its queue full, its collector down): for the metrics and a warning. */
export const droppedSpans = (): number | undefined => tracing()?.state.droppedSpans();

/** Sends the spans still queued (the drain before exit); at once when tracing is off. */
export const flushTraces = async (): Promise<void> => {
  await tracing()?.state.flush();
};

/** At most one warning of dropped spans this often. */
const DROP_REPORT_MS = 60_000;
/** How often the count is looked at: the first drop is told within this. */
const DROP_CHECK_MS = 5_000;

/** Warns of spans being dropped (the exporter's collector down or slow): at once, then at most once a minute. */
export function reportDroppedSpans(warn: (message: string, fields: Record<string, unknown>) => void): void {
  const t = tracing();
  if (!t) return;
  let reported = 0;
  let warnedAt = Number.NEGATIVE_INFINITY;
  setInterval(() => {
    const dropped = t.state.droppedSpans();
    if (dropped === reported || Date.now() - warnedAt < DROP_REPORT_MS) return;
    warn('spans dropped: the OpenTelemetry collector did not take them in time (OTEL_EXPORTER_OTLP_ENDPOINT)', {
      dropped: dropped - reported,
      dropped_total: dropped,
    });
    reported = dropped;
    warnedAt = Date.now();
  }, DROP_CHECK_MS).unref();
}

/** Runs `work` with tracing suppressed (the warm-up's requests at start). */
export const untraced = <T>(work: () => Promise<T>): Promise<T> => {
  const t = tracing();
  return t ? t.state.untraced(work) : work();
};
