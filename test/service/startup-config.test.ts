// The real entry point (server/main.ts, as npm start runs it: bundled, scripts/start.mjs) as a process, for what
// does not depend on the engine: its logs, its metrics port, a start that fails (port taken, a first key that
// cannot be written) and configuration errors. The starts on each engine are startup.test.ts.

import { existsSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { secretOf } from '../support/api-keys.js';
import { apiClient } from '../support/server.js';
import { KEY_PATTERN, runToExit, SERVICE, stopAll } from './process.js';
import { bannerOnly, SLOW, startupSuite } from './startup-support.js';

const { keyDir, keyFiles, newDatabase, envFor, start } = startupSuite();
// Each test's processes stopped after it.
afterEach(stopAll);

describe('logs', SLOW, () => {
  it('are JSON lines that never carry an API key, valid or not, and are all stdout carries', async () => {
    const { server, banner, url, key } = await start(await newDatabase(), { LOG_LEVEL: 'debug' });
    expect(bannerOnly(server.stderr(), banner)).toBe(true);
    const wrong = `${key.slice(0, -4)}AAAA`;
    for (const token of [key, wrong, 'not-a-key']) {
      await fetch(`${url}/api/v1/domains?search=x`, { headers: { Authorization: `Bearer ${token}` } });
    }
    await apiClient(`${url}/api/v1`, key).POST('/domains', { body: { name: 'bad_name' } });
    await server.waitForOutput(/"statusCode":422/);
    await server.stop('SIGTERM');

    const logs = server.stdout().trim().split('\n');
    expect(logs.filter((line) => line.includes('"msg":"request"'))).toHaveLength(4);
    expect(JSON.parse(logs.find((line) => line.includes('"msg":"listening"')) as string)).toMatchObject({ url });
    for (const line of logs) {
      expect(() => JSON.parse(line)).not.toThrow();
      expect(line).not.toContain(secretOf(key));
      expect(line).not.toContain(secretOf(wrong));
      expect(line).not.toContain('not-a-key');
    }
  });
});

describe('metrics', SLOW, () => {
  it('are served on METRICS_PORT, printed at start, and count the requests', async () => {
    const { banner, url, key } = await start(await newDatabase(), { METRICS_PORT: '0' });
    const metricsUrl = /Metrics: (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(banner)?.[1] as string;
    expect(metricsUrl).toBeDefined();
    expect(metricsUrl.startsWith(url)).toBe(false);
    expect((await apiClient(`${url}/api/v1`, key).GET('/spaces')).response.status).toBe(200);
    const text = await (await fetch(metricsUrl)).text();
    expect(text).toContain('http_requests_total{operation_id="spaces_list",status="200"} 1');
    // Not on the service's port without METRICS_TOKEN.
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
  });
});

describe('a start that fails', SLOW, () => {
  it('exits non-zero when the port is taken, and issues the demo key only at a start that succeeds', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    const database = await newDatabase();
    try {
      const exit = await runToExit(SERVICE, [], { ...envFor(database), PORT: port });
      expect(exit.code).not.toBe(0);
      expect(exit.stderr).toMatch(/could not start: .*EADDRINUSE/);
      expect(exit.stdout).not.toMatch(KEY_PATTERN);
      expect(existsSync(keyFiles.get(database) as string)).toBe(false);
    } finally {
      taken.close();
    }
    const { banner, key, url } = await start(database);
    expect(banner).toContain('written to');
    expect((await apiClient(`${url}/api/v1`, key).GET('/spaces')).response.status).toBe(200);
  });
});

describe('a first key that cannot be written', SLOW, () => {
  it('fails the start naming FIRST_KEY_FILE, and issues no key', async () => {
    const blocker = join(keyDir, 'a-file-not-a-folder');
    writeFileSync(blocker, '');
    const database = await newDatabase();
    const exit = await runToExit(SERVICE, [], { ...envFor(database), FIRST_KEY_FILE: join(blocker, 'key') });
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/could not start: FIRST_KEY_FILE \S+ cannot be written/);
    expect(exit.stderr).toContain('npm run keys -- create');
    // No key was issued: the next start, with a file it can write, issues the first one.
    const { banner, key, url } = await start(database);
    expect(banner).toContain('No API key existed');
    expect((await apiClient(`${url}/api/v1`, key).GET('/spaces')).response.status).toBe(200);
  });
});

describe('invalid configuration', SLOW, () => {
  // Each variable's rule is a row of test/unit/config.test.ts; the process is started once, with several bad.
  it('names every bad variable at once', async () => {
    const exit = await runToExit(SERVICE, [], {
      ...envFor(await newDatabase()),
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      METRICS_TOKEN: 'short-secret',
    });
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    for (const variable of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'METRICS_TOKEN'])
      expect(exit.stderr).toContain(variable);
    for (const value of ['"abc"', '"loud"', '"mysql://x"']) expect(exit.stderr).toContain(value);
    expect(exit.stderr).not.toContain('short-secret');
    expect(exit.stderr).not.toContain('listening on');
    expect(exit.stdout.match(KEY_PATTERN)).toBeNull();
  });
});
