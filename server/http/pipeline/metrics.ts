// Prometheus metrics by prom-client: request counts and latency per operation and status (and, under the HTTP
// semantic conventions' names, per method, route and status), the release (dss_build_info), the spans tracing
// dropped, and the process's default metrics (CPU, memory, event loop lag, GC). Served on a port of their own (METRICS_PORT) or on the
// service's port at /metrics behind a bearer token (METRICS_TOKEN); never in the open by default. With
// WORKERS > 1 both show every worker's requests, summed in the primary (cluster-metrics.ts, dead workers' counts
// kept): the primary serves METRICS_PORT itself, and a worker asked on the service's port gets the sum from it.
import cluster from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { RequestHandler } from 'express';
import type PromClient from 'prom-client';
import { buildInfo } from '../../build-info.js';
import { promClient } from '../../prom-client.js';
import { ApiSpec } from '../../spec-model.js';
import { droppedSpans, tracing } from '../../tracing.js';
import { HttpProblem } from '../problems/problem.js';
import { context } from '../routing/request-context.js';
import { answerPrimary, clusterSum } from './cluster-metrics.js';
import type { RequestStep } from './every-request.js';

// The service's own endpoints are labelled by their path; any other request outside an operation (404s of
// every made-up path) is "unknown", so the number of label values stays bounded.
const OWN_PATHS = new Set(['/healthz', '/readyz', '/openapi.json', '/openapi.yaml', '/docs', '/metrics']);

/** prom-client's default gauges whose names end in _total (a counter's suffix). */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];
/** Methods named as they are; any other is "_OTHER" (the conventions' bound on the label's values). */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'CONNECT']);

export interface Metrics {
  /** Counts and times every request once it is answered. */
  observe: RequestStep;
  /** The Prometheus text: this process's metrics, or every worker's with WORKERS > 1. */
  collect(): Promise<string>;
  contentType: string;
  /** The registry this process's metrics live in, for the other parts that count (the webhook worker). */
  registry: PromClient.Registry;
}

/** How long a worker waits for the primary's sum (prom-client's own wait for the workers is 5 s). */
const CLUSTER_WAIT_MS = 6_000;
const SUM_REQUEST = 'dss:metrics-sum-request';
const SUM = 'dss:metrics-sum';

/** The metrics of a process that serves requests: on its own, or as a worker of the primary's sum. */
export function createMetrics({ logLinesDropped }: { logLinesDropped?: () => number } = {}): Metrics {
  const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } = promClient();
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // Gauges named as counters fail `promtool check metrics`; the same counts stay by type in nodejs_active_handles,
  // nodejs_active_requests and nodejs_active_resources.
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);
  const { version, commit } = buildInfo();
  new Gauge({
    name: 'dss_build_info',
    help: 'The release this process runs: always 1, with the version and the commit as labels.',
    labelNames: ['version', 'commit'] as const,
    aggregator: 'max',
    registers: [registry],
  }).set({ version, commit }, 1);
  if (tracing()) {
    let counted = 0;
    new Counter({
      name: 'tracing_spans_dropped_total',
      help: 'Spans the OpenTelemetry exporter dropped: its queue full or its collector down (OTEL_EXPORTER_OTLP_ENDPOINT).',
      registers: [registry],
      collect() {
        const dropped = droppedSpans() ?? 0;
        this.inc(dropped - counted);
        counted = dropped;
      },
    });
  }
  if (logLinesDropped) {
    let counted = 0;
    new Counter({
      name: 'log_lines_dropped_total',
      help: 'Log lines dropped because stdout was read more slowly than the service logs (LOG_BUFFER_BYTES).',
      registers: [registry],
      collect() {
        const dropped = logLinesDropped();
        this.inc(dropped - counted);
        counted = dropped;
      },
    });
  }
  const labelNames = ['operation_id', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by operationId (or own path, or "unknown") and status code.',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from receiving a request to finishing its answer, by operationId and status code.',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // The OpenTelemetry HTTP semantic conventions' names (http.server.request.duration), for dashboards built on
  // them; http_route is the span's http.route (the spec's template under the base path).
  const serverDuration = new Histogram({
    name: 'http_server_request_duration_seconds',
    help: 'Duration of HTTP server requests, by method, route template (or own path, or "unknown") and status code.',
    labelNames: ['http_request_method', 'http_route', 'http_response_status_code'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10],
    registers: [registry],
  });
  const { basePath } = ApiSpec.load();
  const observe: RequestStep = (req, res) => {
    const started = process.hrtime.bigint();
    // Taken now: routing reads HEAD as GET.
    const method = KNOWN_METHODS.has(req.method) ? req.method : '_OTHER';
    res.on('finish', () => {
      const route = context(res).route;
      const path = req.originalUrl.split('?')[0] ?? '';
      const own = OWN_PATHS.has(path) ? path : 'unknown';
      const status = String(res.statusCode);
      const labels = { operation_id: route?.operation.id ?? own, status };
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      requests.inc(labels);
      duration.observe(labels, seconds);
      serverDuration.observe(
        {
          http_request_method: method,
          http_route: route ? `${basePath}${route.template}` : own,
          http_response_status_code: status,
        },
        seconds,
      );
    });
  };
  if (!cluster.isWorker)
    return { observe, collect: () => registry.metrics(), contentType: registry.contentType, registry };
  answerPrimary(registry);
  return { observe, collect: askPrimary, contentType: registry.contentType, registry };
}

/**
 * The primary's side with WORKERS > 1: the sum of every worker's metrics (METRICS_PORT), also handed to a worker
 * that is asked for them on the service's port (METRICS_TOKEN). The primary answers no requests of its own.
 */
export function createClusterMetrics(): Pick<Metrics, 'collect' | 'contentType'> {
  const client = promClient();
  const collect = clusterSum(client);
  cluster.on('message', (worker, message: { type?: string; id?: number } | null) => {
    if (message?.type !== SUM_REQUEST) return;
    collect().then(
      (text) => worker.send({ type: SUM, id: message.id, text }),
      (error: unknown) => worker.send({ type: SUM, id: message.id, error: String(error) }),
    );
  });
  return { collect, contentType: client.Registry.PROMETHEUS_CONTENT_TYPE };
}

let asked = 0;
let listening = false;
const waiting = new Map<number, (answer: { text?: string; error?: string }) => void>();

/** A worker's /metrics: the primary's sum over all workers. */
function askPrimary(): Promise<string> {
  if (!listening) {
    listening = true;
    process.on('message', (message: { type?: string; id?: number; text?: string; error?: string } | null) => {
      if (message?.type === SUM && message.id !== undefined) waiting.get(message.id)?.(message);
    });
  }
  const id = ++asked;
  return new Promise<string>((resolve, reject) => {
    const settle = ({ text, error }: { text?: string; error?: string }) => {
      waiting.delete(id);
      clearTimeout(timer);
      if (error === undefined) resolve(text ?? '');
      else reject(new Error(error));
    };
    const timer = setTimeout(() => settle({ error: 'the primary did not send the metrics in time' }), CLUSTER_WAIT_MS);
    waiting.set(id, settle);
    process.send?.({ type: SUM_REQUEST, id });
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** GET /metrics on the service's port: only with `Authorization: Bearer <METRICS_TOKEN>`. */
export function metricsEndpoint(metrics: Metrics, token: string): RequestHandler {
  const expected = sha256(token);
  return async (req, res) => {
    const given = /^Bearer +(\S+) *$/i.exec(req.get('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(sha256(given), expected)) {
      throw new HttpProblem('unauthorized', 'The metrics need "Authorization: Bearer <METRICS_TOKEN>".', {
        headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
      });
    }
    res
      .set('Cache-Control', 'no-store')
      .type(metrics.contentType)
      .send(await metrics.collect());
  };
}

/** A server of its own for the metrics (METRICS_PORT): GET /metrics, 404 for anything else. */
export async function listenForMetrics(
  metrics: Pick<Metrics, 'collect' | 'contentType'>,
  port: number,
  host: string,
): Promise<Server> {
  const server = createServer(async (req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Metrics are at GET /metrics.\n');
      return;
    }
    try {
      const body = await metrics.collect();
      res.writeHead(200, { 'Content-Type': metrics.contentType }).end(body);
    } catch {
      res.writeHead(500, { 'Content-Type': 'text/plain' }).end('The metrics could not be collected.\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  // The service's shutdown waits on its own server; this one must not hold the process open.
  server.unref();
  return server;
}
