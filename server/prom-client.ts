// prom-client, loaded only when metrics are asked for (METRICS_PORT or METRICS_TOKEN): a start without metrics
// never reads the package. The one loader, for the request metrics (http/pipeline/metrics.ts) and the webhook metrics.
import { createRequire } from 'node:module';
import type PromClient from 'prom-client';

export const promClient = (): typeof PromClient => createRequire(import.meta.url)('prom-client') as typeof PromClient;
