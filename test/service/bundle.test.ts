// npm start's bundle (scripts/start.mjs, scripts/bundle.mjs): rebuilt when a source is newer than it, used as it
// is otherwise. In the SQLite leg alone (test/legs.ts): the PostgreSQL and Node.js 24 legs run at the same time
// in the same checkout, where one leg's rebuild of the shared .build/ would be the other's surprise.
import { existsSync, readdirSync, readFileSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { freshDatabase, type TestDatabase } from '../support/database.js';
import { apiClient } from '../support/server.js';
import { ROOT, startListening, stopAll } from './process.js';

const bundle = join(ROOT, '.build/server.mjs');
const databases: TestDatabase[] = [];
afterEach(stopAll);
afterAll(() => Promise.all(databases.map((database) => database.drop())));

/** npm start's entry point on a new database, once it has printed where it listens. */
async function start() {
  const database = await freshDatabase();
  databases.push(database);
  return startListening({ DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
}

/** The processes `pid` started that still run (Linux: each thread's children). */
function childProcesses(pid: number): string[] {
  return readdirSync(`/proc/${pid}/task`).flatMap((thread) =>
    readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean),
  );
}

describe('npm start (scripts/start.mjs, scripts/bundle.mjs)', { timeout: 180_000 }, () => {
  it('runs the service from a bundle of server/, rebuilt when it is older than a source', async () => {
    // An aged bundle is stale: every source is newer.
    if (existsSync(bundle)) utimesSync(bundle, new Date('2001-01-01'), new Date('2001-01-01'));
    const { url, server } = await start();
    expect(statSync(bundle).mtimeMs).toBeGreaterThan(Date.parse('2001-01-02'));
    const inputs = JSON.parse(readFileSync(join(ROOT, '.build/inputs.json'), 'utf8')) as string[];
    expect(inputs).toEqual(expect.arrayContaining(['server/main.ts', 'server/app.ts', 'server/cli/keys.ts']));
    // esbuild's process, which held what it built, went with the build.
    expect(childProcesses(server.child.pid as number)).toEqual([]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const { response } = await apiClient(`${url}/api/v1`, server.firstKey() as string).GET('/spaces');
    expect(response.status).toBe(200);
    // The bundled spec is found next to its module, as from source.
    expect((await fetch(`${url}/openapi.yaml`)).status).toBe(200);
    expect((await server.stop('SIGTERM')).code).toBe(0);
  });

  it('starts from the built bundle as it is when no source changed', async () => {
    const built = statSync(bundle).mtimeMs;
    const { url, server } = await start();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(statSync(bundle).mtimeMs).toBe(built);
    expect((await server.stop('SIGTERM')).code).toBe(0);
  });
});
