// The real entry point (server/main.ts, as npm start runs it: bundled, scripts/start.mjs) as a process on the
// engine under test (and, in CI's Node.js 24 leg, with the other SQLite driver): the first start (the demo key,
// the banner), a second start on the same database, a clean exit on SIGTERM, and data that survives a restart and
// a SIGKILL. The starts run in a chain on one database where a test needs the one before (four starts in all).
// What does not depend on the engine (logs, metrics, starts that fail, configuration errors) is
// startup-config.test.ts.

import { existsSync, rmSync, statSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiClient } from '../support/server.js';
import { KEY_PATTERN } from './process.js';
import { bannerOnly, SLOW, type Started, startupSuite } from './startup-support.js';

const { keyFiles, newDatabase, start } = startupSuite();

describe('first start', SLOW, () => {
  let database: string;
  let first: Started;
  beforeAll(async () => {
    database = await newDatabase();
    first = await start(database, { LOG_LEVEL: 'info' });
  });

  it('writes a demo key to a file only its user can read, and prints its path and a curl line, not the key', async () => {
    const { url, banner, key, server } = first;
    const file = keyFiles.get(database) as string;
    expect(key).toMatch(new RegExp(`^${KEY_PATTERN.source}$`));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(server.stdout()).not.toContain(key);
    expect(server.stdout().match(KEY_PATTERN)).toBeNull();
    expect(banner).toContain(`written to ${file}`);
    const curl = banner.split('\n').find((line) => line.trim().startsWith('curl '));
    expect(curl).toContain(`Authorization: Bearer $(cat ${file})`);
    expect(curl).toContain(`${url}/api/v1/domains`);

    const { data, response } = await apiClient(`${url}/api/v1`, key).GET('/domains');
    expect(response.status).toBe(200);
    expect(data?.meta.total).toBe(0);
  });

  it("logs the key file's path, never the key", async () => {
    const { server, key } = first;
    await server.waitForOutput(/"msg":"first API key written to a file"/);
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes('first API key written'));
    expect(JSON.parse(line as string)).toMatchObject({ path: keyFiles.get(database), account: 'demo' });
    expect(server.stdout()).not.toContain(key);
  });

  it('answers the public endpoints at the printed URL', async () => {
    const { url } = first;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect((await fetch(`${url}/api/v1/domains`)).status).toBe(401);
  });
});

// One database through three starts: data written, SIGTERM, a second start (no new key), SIGKILL right after an
// acknowledged write, a third start.
describe('starts on the same database', SLOW, () => {
  let database: string;
  let key: string;
  let created: { domain: Record<string, unknown>; space: Record<string, unknown>; domainId: number };
  let second: Started;

  it('exits with code 0 on SIGTERM, with nothing but the banner on stderr', async () => {
    database = await newDatabase();
    const first = await start(database);
    key = first.key;
    const client = apiClient(`${first.url}/api/v1`, key);
    const domain = await client.POST('/domains', {
      body: { name: 'persisted.example.com', index_page: 'https://persisted.example.com/' },
    });
    expect(domain.response.status).toBe(201);
    const space = await client.POST('/spaces', { body: { name: 'Kept', color: 5 } });
    expect(space.response.status).toBe(201);
    created = {
      domain: domain.data?.data as never,
      space: space.data?.data as never,
      domainId: domain.data?.data.id as number,
    };
    const exit = await first.server.stop('SIGTERM');
    expect(exit.code).toBe(0);
    // stderr has the banner and nothing else: no warning, no error.
    expect(bannerOnly(exit.stderr, first.banner)).toBe(true);
  });

  it('prints no new key at a second start, and the first key still works', async () => {
    rmSync(keyFiles.get(database) as string);
    second = await start(database);
    expect(second.banner).toContain('listening on');
    expect(second.banner.match(KEY_PATTERN)).toBeNull();
    expect(second.server.stdout().match(KEY_PATTERN)).toBeNull();
    expect(existsSync(keyFiles.get(database) as string)).toBe(false);
    const { response } = await apiClient(`${second.url}/api/v1`, key).GET('/spaces');
    expect(response.status).toBe(200);
  });

  it('keeps data written before SIGTERM across the restart', async () => {
    const client = apiClient(`${second.url}/api/v1`, key);
    const domain = await client.GET('/domains/{id}', { params: { path: { id: created.domainId } } });
    expect(domain.response.status).toBe(200);
    expect(domain.data?.data).toEqual(created.domain);
    const spaces = await client.GET('/spaces');
    expect(spaces.data?.data).toEqual([created.space]);
  });

  it('keeps a write acknowledged just before the process is killed outright (SIGKILL)', async () => {
    const written = await apiClient(`${second.url}/api/v1`, key).POST('/spaces', { body: { name: 'Durable' } });
    expect(written.response.status).toBe(201);
    const killed = await second.server.stop('SIGKILL');
    expect(killed.signal).toBe('SIGKILL');

    const third = await start(database);
    const id = written.data?.data.id as number;
    const shown = await apiClient(`${third.url}/api/v1`, key).GET('/spaces/{id}', { params: { path: { id } } });
    expect(shown.data?.data).toEqual(written.data?.data);
  });
});
