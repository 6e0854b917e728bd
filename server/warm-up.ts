// Before the service listens, it sends one request of each kind through a copy of its app on a throw-away
// in-memory database: express-openapi-validator compiles an operation's schemas when the first request reaches it
// (its API offers no way to compile them sooner), and V8 compiles each code path on its first run. Without this,
// the first request of each kind to a fresh process would cost many times its usual CPU. The copy is given the
// validation of the app that will serve, and shares the docs page it prepared (http/pages/docs.ts keeps one per file);
// nothing else of it outlives the warm-up. The validator adds its path-parameter callbacks (`app.param`) to the
// app of the first request it sees: this copy's, so the serving app runs none.
import type { AddressInfo } from 'node:net';
import { issueKey } from './accounts/keys.js';
import { createApp } from './app.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrations.js';
import { routeTable } from './http/routing/routes.js';
import type { RequestValidation } from './http/validation/request-validation.js';
import { createLogger } from './logger.js';
import { ApiSpec } from './spec-model.js';

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

/** `docsSandboxKey`: the one the app that will serve was given, so that both share one prepared docs page. */
export async function warmUp({
  spec = ApiSpec.load(),
  validation,
  docsSandboxKey,
}: {
  spec?: ApiSpec;
  /** The serving app's validation: the one to compile. */
  validation?: RequestValidation;
  docsSandboxKey?: string | undefined;
} = {}): Promise<void> {
  const db = openDatabase('sqlite::memory:');
  try {
    await migrateToLatest(db);
    const { key } = await issueKey(db, 'warm-up');
    const app = await createApp({
      db,
      spec,
      logger: createLogger('silent'),
      ...(validation ? { validation } : {}),
      ...(docsSandboxKey ? { docsSandboxKey } : {}),
    });
    // `exclusive`: in a WORKERS process, a port of its own, not one node:cluster shares between the workers.
    const server = app.listen({ port: 0, host: '127.0.0.1', exclusive: true });
    try {
      await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-www-form-urlencoded' };
      const sends = routeTable(spec).routes.flatMap((route) =>
        requestsOf(route.method, route.template).map((request) => ({ method: route.method, ...request })),
      );
      // A path no route takes, with the trailing slashes the 404's hint reads (long: code that meets a long
      // input first runs slower), and a list query its validation refuses for its length.
      sends.push({ method: 'GET', path: '/nowhere//' }, { method: 'GET', path: `/nowhere${'/'.repeat(2000)}x` });
      sends.push({ method: 'GET', path: `/spaces?search=${'x'.repeat(2000)}` });
      // Query strings refused before anything else reads them (400): too many parts, a malformed %-escape.
      sends.push(
        { method: 'GET', path: `/spaces?search=${'&'.repeat(2000)}x` },
        { method: 'GET', path: '/spaces?search=%ZZ' },
      );
      const urls: Array<{ method: string; path: string; url: string; body?: string; identity?: boolean }> = sends.map(
        (send) => ({ ...send, url: `${origin}${spec.basePath}${send.path}` }),
      );
      // The pages outside the API, each the first time (the docs page is the one the service prepared).
      for (const path of ['/docs', '/docs/', '/', '/openapi.json', '/openapi.yaml', '/problems/validation', '/x//'])
        urls.push({ method: 'GET', path, url: `${origin}${path}` });
      // The docs page uncompressed too (fetch asks for gzip): its first 4 MB write costs more than the later ones.
      urls.push({ method: 'GET', path: '/docs', url: `${origin}/docs`, identity: true });
      for (const { method, url, body, identity } of urls) {
        const sent = identity ? { ...headers, 'Accept-Encoding': 'identity' } : headers;
        const response = await fetch(url, { method, headers: sent, body, redirect: 'manual' });
        // Read and dropped chunk by chunk: a body collected whole (the docs page is megabytes) would be held in
        // old space, with its chunks, until a full collection.
        await response.body?.pipeTo(new WritableStream());
      }
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  } finally {
    await db.destroy();
  }
}
