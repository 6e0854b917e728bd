// Prometheus metrics (prom-client): on the service's port behind METRICS_TOKEN here; on a port of their own
// in test/service/startup.test.ts. Counters per operationId and status rise with the requests answered.
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { createMetrics } from '../../server/http/pipeline/metrics.js';
import { startServer } from '../support/server.js';

const TOKEN = 'metrics-token-0123456789';
const server = await startServer({ metrics: createMetrics(), metricsToken: TOKEN });
afterAll(() => server.close());
const alice = await server.account('alice');

async function scrape(): Promise<string> {
  const response = await fetch(`${server.origin}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

/** The value of one sample, 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && wanted.every((w) => l.slice(0, l.lastIndexOf('}')).includes(w)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const api = (path: string) => fetch(`${server.apiUrl}${path}`, { headers: { Authorization: `Bearer ${alice.key}` } });

describe('metrics', () => {
  it('count requests per operationId and status, and time them in a histogram', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await api('/domains')).status).toBe(200);
    expect((await api('/spaces/999999')).status).toBe(404);
    const after = await scrape();

    const list = { operation_id: 'domains_list', status: '200' };
    expect(sample(after, 'http_requests_total', list) - sample(before, 'http_requests_total', list)).toBe(3);
    const missing = { operation_id: 'spaces_show', status: '404' };
    expect(sample(after, 'http_requests_total', missing) - sample(before, 'http_requests_total', missing)).toBe(1);
    expect(
      sample(after, 'http_request_duration_seconds_count', list) -
        sample(before, 'http_request_duration_seconds_count', list),
    ).toBe(3);
    expect(sample(after, 'http_request_duration_seconds_bucket', { ...list, le: '+Inf' })).toBeGreaterThanOrEqual(3);
  });

  it('label requests outside any operation "unknown", so made-up paths add no label values', async () => {
    const before = await scrape();
    for (const path of ['/api/v1/x1', '/api/v1/x2', '/wp-login.php']) await fetch(`${server.origin}${path}`);
    const after = await scrape();
    const unknown = { operation_id: 'unknown', status: '404' };
    expect(sample(after, 'http_requests_total', unknown) - sample(before, 'http_requests_total', unknown)).toBe(3);
    expect(after).not.toContain('x1');
    expect(after).not.toContain('wp-login');
  });

  it('time requests under the HTTP semantic conventions’ names too, the route being the spec’s template', async () => {
    const before = await scrape();
    expect((await api('/spaces/999999')).status).toBe(404);
    expect((await fetch(`${server.origin}/api/v1/nowhere`, { method: 'PROPFIND' })).status).toBeGreaterThanOrEqual(400);
    const after = await scrape();
    const show = { http_request_method: 'GET', http_route: '/api/v1/spaces/{id}', http_response_status_code: '404' };
    const name = 'http_server_request_duration_seconds_count';
    expect(sample(after, name, show) - sample(before, name, show)).toBe(1);
    expect(after).toContain('http_request_method="_OTHER",http_route="unknown"');
    expect(after).not.toContain('/spaces/999999');
  });

  it('say which release runs, and name no gauge as a counter', async () => {
    const text = await scrape();
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(text).toMatch(
      new RegExp(`^dss_build_info\\{version="${version}",commit="(?:[0-9a-f]{40}|unknown)"\\} 1$`, 'm'),
    );
    const gauges = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((match) => match[1]);
    expect(gauges.filter((gauge) => gauge?.endsWith('_total'))).toEqual([]);
    expect(gauges).toContain('nodejs_active_handles');
  });

  it('include the default process metrics', async () => {
    const text = await scrape();
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(text).toContain(`# TYPE ${name}`);
    }
  });

  it.each([
    { what: 'no token', headers: {} },
    { what: 'a wrong token', headers: { Authorization: 'Bearer metrics-token-wrong-value' } },
    { what: 'an API key', headers: { Authorization: 'Bearer KEY' } },
  ])('refuse $what with 401', async ({ headers }) => {
    const sent = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('KEY', alice.key)]));
    const response = await fetch(`${server.origin}/metrics`, { headers: sent });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(await response.text()).not.toContain('http_requests_total');
  });
});

describe('metrics off (the default)', () => {
  it('are not served', async () => {
    const plain = await startServer();
    try {
      expect((await fetch(`${plain.origin}/metrics`)).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
