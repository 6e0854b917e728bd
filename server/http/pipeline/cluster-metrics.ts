// WORKERS > 1: the primary's sum of its workers' metrics, which never goes down when a worker dies. prom-client's
// AggregatorRegistry.clusterMetrics() sums the live workers only, so a dead worker's requests vanished from
// http_requests_total (Prometheus reads a fall as a counter reset, and rate() then overcounts). Here the primary
// asks each worker for its metrics as JSON, keeps each one's latest answer, and on its exit keeps its counters
// and histograms for good; the sum is prom-client's public AggregatorRegistry.aggregate of them all.
import cluster, { type Worker } from 'node:cluster';
import type PromClient from 'prom-client';

type Snapshot = Awaited<ReturnType<PromClient.Registry['getMetricsAsJSON']>>;

const REQUEST = 'dss:worker-metrics-request';
const ANSWER = 'dss:worker-metrics';
/** How long the primary waits for a worker's answer before it counts that worker's latest one. */
const WORKER_WAIT_MS = 5_000;

/** In a worker: answers the primary's requests for this registry's metrics. */
export function answerPrimary(registry: PromClient.Registry): void {
  process.on('message', (message: { type?: string; id?: number } | null) => {
    if (message?.type !== REQUEST) return;
    registry.getMetricsAsJSON().then(
      (metrics) => process.send?.({ type: ANSWER, id: message.id, metrics }),
      () => process.send?.({ type: ANSWER, id: message.id }),
    );
  });
}

/** In the primary: the workers' metrics summed, dead workers' counters and histograms included. */
export function clusterSum(promClient: typeof PromClient): () => Promise<string> {
  const latest = new Map<number, Snapshot>();
  let retired: Snapshot[] = [];
  let asked = 0;
  cluster.on('exit', (worker) => {
    const last = latest.get(worker.id);
    latest.delete(worker.id);
    // Gauges (memory, handles) describe a live process; what a dead one counted stays counted.
    if (last) retired.push(last.filter((metric) => ['counter', 'histogram'].includes(String(metric.type))));
  });
  const ask = (worker: Worker) =>
    new Promise<Snapshot | undefined>((resolve) => {
      const id = ++asked;
      const done = (metrics: Snapshot | undefined) => {
        clearTimeout(timer);
        worker.off('message', listener);
        worker.off('exit', gone);
        if (metrics) latest.set(worker.id, metrics);
        resolve(metrics ?? latest.get(worker.id));
      };
      const listener = (message: { type?: string; id?: number; metrics?: Snapshot } | null) => {
        if (message?.type === ANSWER && message.id === id) done(message.metrics);
      };
      const gone = () => done(undefined);
      const timer = setTimeout(() => done(undefined), WORKER_WAIT_MS);
      worker.on('message', listener);
      worker.once('exit', gone);
      worker.send({ type: REQUEST, id });
    });
  return async () => {
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const live = (await Promise.all(workers.map(ask))).filter((metrics): metrics is Snapshot => metrics !== undefined);
    // A worker that died while asked is in `retired` already, with its latest answer.
    if (retired.length > 1) retired = [await promClient.AggregatorRegistry.aggregate(retired).getMetricsAsJSON()];
    return promClient.AggregatorRegistry.aggregate([...live, ...retired]).metrics();
  };
}
