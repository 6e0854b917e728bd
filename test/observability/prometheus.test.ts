// The metrics and alerts as a real Prometheus sees them (Debian's prometheus package: promtool and the server).
// The alert rules pass `promtool check rules` and their unit tests (scripts/deploy/alerts.test.yml); /metrics
// passes `promtool check metrics` from one process and from WORKERS=2; and a Prometheus on loopback, started
// here, scrapes the service, evaluates every rule on its live series, and puts the 5xx alert in pending once
// writes fail (another process holds SQLite's write lock: 503 database-busy); the dashboard's queries run there.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueKey } from '../../server/accounts/keys.js';
import { openDatabase } from '../../server/db/database.js';
import { createMetrics } from '../../server/http/pipeline/metrics.js';
import { holdSqliteWriteLock, type Locker } from '../faults/support.js';
import { ROOT, type Running, runScript, SERVICE, stopAll } from '../service/process.js';
import { startServer } from '../support/server.js';

const DEPLOY = join(ROOT, 'scripts/deploy');
const RULES = join(DEPLOY, 'alerts.yml');

let dir: string;
let server: Running;
let origin: string;
let metricsUrl: string;
let key: string;
let prometheus: ChildProcess | undefined;
let locker: Locker | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dss-prometheus-'));
  const databaseUrl = `sqlite:${join(dir, 'db.sqlite')}`;
  server = runScript(SERVICE, [], {
    PORT: '0',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    WORKERS: '2',
    LOG_LEVEL: 'error',
    METRICS_PORT: '0',
    DATABASE_LOCK_TIMEOUT_S: '1',
  });
  const [, at, metricsAt] = await server.waitForOutput(
    /listening on (http:\/\/127\.0\.0\.1:\d+)[\s\S]*Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)\n/,
    110_000,
  );
  origin = at as string;
  metricsUrl = metricsAt as string;
  const db = openDatabase(databaseUrl);
  key = (await issueKey(db, 'prometheus')).key;
  await db.destroy();
}, 150_000);

afterAll(async () => {
  locker?.stop();
  prometheus?.kill('SIGKILL');
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
});

/** promtool's verdict on the exposition `text`: its exit status and what it printed. */
function checkMetrics(text: string) {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: run.status, said: `${run.stdout}${run.stderr}` };
}

const api = (method: string, path: string, body?: string) =>
  fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body,
    signal: AbortSignal.timeout(20_000),
  });

describe('the alert rules', () => {
  it('pass promtool check rules', () => {
    expect(execFileSync('promtool', ['check', 'rules', RULES], { encoding: 'utf8' })).toMatch(/SUCCESS: 9 rules found/);
  });

  it('pass their unit tests: each fires on series that should fire it, and is quiet on others', () => {
    const run = spawnSync('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: DEPLOY, encoding: 'utf8' });
    expect(`${run.stdout}${run.stderr}`).toContain('SUCCESS');
    expect(run.status).toBe(0);
  });
});

describe('/metrics', () => {
  it('passes promtool check metrics with WORKERS=2 (the primary’s sum)', async () => {
    expect((await api('GET', '/spaces')).status).toBe(200);
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toContain('http_server_request_duration_seconds_bucket');
    expect(checkMetrics(text)).toEqual({ status: 0, said: '' });
  });

  it('passes promtool check metrics from one process', async () => {
    const one = await startServer({ metrics: createMetrics(), metricsToken: 'promtool-token-0123456789' });
    try {
      const alice = await one.account('alice');
      await fetch(`${one.apiUrl}/domains`, { headers: { Authorization: `Bearer ${alice.key}` } });
      const response = await fetch(`${one.origin}/metrics`, {
        headers: { Authorization: 'Bearer promtool-token-0123456789' },
      });
      const text = await response.text();
      expect(text).toContain('dss_build_info');
      expect(checkMetrics(text)).toEqual({ status: 0, said: '' });
    } finally {
      await one.close();
    }
  });
});

/** A free port on loopback (Prometheus takes an address, not port 0). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function until<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('a real Prometheus', () => {
  it('scrapes the service and evaluates every rule on its live series; the 5xx alert goes pending on failing writes', async () => {
    const port = await freePort();
    const target = new URL(metricsUrl).host;
    const config = join(dir, 'prometheus.yml');
    writeFileSync(
      config,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(RULES)}]`,
        `scrape_configs: [{ job_name: dss, static_configs: [{ targets: [${JSON.stringify(target)}] }] }]`,
      ].join('\n'),
    );
    prometheus = spawn(
      'prometheus',
      [
        `--config.file=${config}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: 'ignore' },
    );
    const base = `http://127.0.0.1:${port}`;
    const query = async (promql: string) => {
      const body = (await (await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)).json()) as {
        data: { result: Array<{ metric: Record<string, string>; value: [number, string] }> };
      };
      return body.data.result;
    };

    // Live series: the target up, and the requests this suite sent counted under the conventions' names.
    await until('the scrape', async () => ((await query('up{job="dss"} == 1')).length === 1 ? true : undefined));
    expect((await api('GET', '/spaces')).status).toBe(200);
    const served = await until('the request series', async () => {
      const [sample] = await query('sum(http_server_request_duration_seconds_count{http_route="/api/v1/spaces"})');
      return sample && Number(sample.value[1]) > 0 ? sample : undefined;
    });
    expect(Number(served.value[1])).toBeGreaterThan(0);

    // Every rule evaluated without error, on series that exist.
    type Rule = { name: string; health: string; lastEvaluation: string; state: string };
    const rules = await until('every rule evaluated', async () => {
      const body = (await (await fetch(`${base}/api/v1/rules`)).json()) as {
        data: { groups: Array<{ rules: Rule[] }> };
      };
      const all = body.data.groups.flatMap((group) => group.rules);
      return all.length === 9 && all.every((rule) => !rule.lastEvaluation.startsWith('0001')) ? all : undefined;
    });
    expect(rules.filter((rule) => rule.health !== 'ok')).toEqual([]);
    expect(rules.filter((rule) => rule.state !== 'inactive')).toEqual([]);
    expect(await query('min by (instance) (database_ready)')).toEqual([
      expect.objectContaining({ value: [expect.any(Number), '1'] }),
    ]);
    // The dashboard's every query is one Prometheus runs on these series (grafana-dashboard.json).
    const dashboard = JSON.parse(readFileSync(join(DEPLOY, 'grafana-dashboard.json'), 'utf8')) as {
      panels: Array<{ title: string; targets: Array<{ expr: string }> }>;
    };
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const answer = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(expr)}`);
        expect({ panel: panel.title, status: ((await answer.json()) as { status: string }).status }).toEqual({
          panel: panel.title,
          status: 'success',
        });
      }
    }

    // Writes failing: another process holds the write lock, and each create is a 503 after 1 s. A counter's first
    // sample is where rate() starts: one 503 first, seen by a scrape, then the rest.
    locker = await holdSqliteWriteLock(join(dir, 'db.sqlite'), 60_000);
    const failing = () =>
      api('POST', '/spaces', JSON.stringify({ name: 'locked' })).then((response) => response.status);
    expect(await failing()).toBe(503);
    const fiveXx =
      'sum(http_server_request_duration_seconds_count{http_route="/api/v1/spaces",http_response_status_code="503"})';
    await until('the first 503 scraped', async () => ((await query(fiveXx)).length === 1 ? true : undefined));
    expect(await Promise.all(Array.from({ length: 5 }, failing))).toEqual(Array(5).fill(503));
    locker.stop();
    const alert = await until('the 5xx alert', async () => {
      const body = (await (await fetch(`${base}/api/v1/alerts`)).json()) as {
        data: { alerts: Array<{ labels: Record<string, string>; state: string }> };
      };
      return body.data.alerts.find((each) => each.labels.alertname === 'DssHighServerErrorRatio');
    });
    expect(['pending', 'firing']).toContain(alert.state);
  }, 120_000);
});
