// Before the service listens, it sends one request of each kind through a copy of its app on a throw-away
// in-memory database: the validator compiles each operation's schemas on the first request that reaches it,
// and V8 compiles each code path on its first run. Without this, the first request of each kind to a fresh
// process cost 20–135 ms of CPU (a refused store 77 ms) instead of 1–4 ms. The copy shares the validator with
// the app that will serve (http/request-validation.ts keeps one per spec); nothing of it outlives the warm-up.
import type { AddressInfo } from 'node:net';
import { issueKey } from './accounts/keys.js';
import { createApp } from './app.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrations.js';
import { createLogger } from './logger.js';
import { ApiSpec } from './spec.js';

/** Requests a route's operation is sent: a valid one and one its validation refuses (nothing is stored). */
function requestsOf(method: string, template: string): Array<{ path: string; body?: string }> {
  const path = template.replace(/\{[^{}/]+\}/g, '1');
  if (method === 'GET') {
    return template.includes('{') ? [{ path }] : [{ path }, { path: `${path}?per_page=7&search=x&sort_by=name` }];
  }
  if (method === 'DELETE') return [{ path }];
  // An empty name and an out-of-range integer: each operation with a body refuses it with a 422.
  return [{ path, body: 'name=&color=9&index_page=x&not_found_page=x&unknown=1' }];
}

export async function warmUp(spec = ApiSpec.load()): Promise<void> {
  const db = openDatabase('sqlite::memory:');
  try {
    await migrateToLatest(db);
    const { key } = await issueKey(db, 'warm-up');
    const app = await createApp({ db, spec, logger: createLogger('silent') });
    // `exclusive`: in a WORKERS process, a port of its own, not one node:cluster shares between the workers.
    const server = app.listen({ port: 0, host: '127.0.0.1', exclusive: true });
    try {
      await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' };
      const sends = spec.operations.flatMap((route) =>
        requestsOf(route.method, route.template).map((request) => ({ method: route.method, ...request })),
      );
      // A path no route takes, with the trailing slashes the 404's hint reads.
      sends.push({ method: 'GET', path: '/nowhere//' });
      for (const { method, path, body } of sends) {
        const response = await fetch(`${origin}${spec.basePath}${path}`, { method, headers, body });
        await response.arrayBuffer();
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  } finally {
    await db.destroy();
  }
}
