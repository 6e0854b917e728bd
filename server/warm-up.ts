// Before the service listens, it sends one request of each kind through a copy of its app: express-openapi-validator
// compiles an operation's schemas when the first request of each media type reaches it (its API offers no way to
// compile them sooner), and V8 compiles each code path on its first run. Without this, the first request of each
// kind to a fresh process would cost many times its usual CPU. The copy is given the validation of the app that
// will serve, and shares the docs page it prepared (http/pages/docs.ts keeps one per file); nothing else of it
// outlives the warm-up. The validator adds its path-parameter callbacks (`app.param`) to the app of the first
// request it sees: this copy's, so the serving app runs none.
//
// The copy runs on the serving database, as an account that does not exist (no key is issued, nothing is stored):
// reads find nothing, every write is refused by its validation (each body below breaks the spec) and an action on
// a record (delete, verify, rotate, test) finds no record of that account. Its requests go through node:http on
// loopback, one connection kept alive: a start needs no second database to migrate and does not load fetch.
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SCOPES } from './accounts/key-policy.js';
import type { Account } from './accounts/keys.js';
import { createApp } from './app.js';
import type { Database } from './db/database.js';
import type { KeyCheck } from './http/access/auth.js';
import { routeTable } from './http/routing/routes.js';
import type { RequestValidation } from './http/validation/request-validation.js';
import { createLogger } from './logger.js';
import { ApiSpec } from './spec-model.js';

/**
 * No account has its id (ids count up from 1 on both engines); every scope, managing keys too, so that each
 * operation's validation is reached (a missing scope is refused before it).
 */
const NO_ACCOUNT: Account = { id: -1, name: 'warm-up', keyId: 'warm-up', policy: { scopes: new Set(SCOPES) } };
const TOKEN = 'warm-up';

/** Bodies every operation with one refuses (422): an empty name, out-of-range integers, a field no body has. */
const REFUSED_BODIES: Record<string, string> = {
  'application/x-www-form-urlencoded': 'name=&color=9&index_page=x&not_found_page=x&unknown=1',
  'application/json': JSON.stringify({
    name: '',
    color: 9,
    index_page: 'x',
    not_found_page: 'x',
    url: 'x',
    events: 'x',
    unknown: 1,
  }),
};

interface Send {
  method: string;
  path: string;
  contentType?: string;
  body?: string;
  identity?: boolean;
}

/** The requests a route's operation is sent: a valid read, and each body it accepts in a form its validation refuses. */
function requestsOf(method: string, template: string, mediaTypes: string[]): Send[] {
  const path = template.replace(/\{[^{}/]+\}/g, '1');
  if (method === 'GET') {
    return template.includes('{')
      ? [{ method, path }]
      : [
          { method, path },
          { method, path: `${path}?per_page=7&search=x&sort_by=name` },
        ];
  }
  if (method === 'DELETE' || mediaTypes.length === 0) return [{ method, path }];
  return mediaTypes.map((contentType) => ({
    method,
    path,
    contentType,
    body: REFUSED_BODIES[contentType] ?? REFUSED_BODIES['application/x-www-form-urlencoded'],
  }));
}

/** A request the warm-up sent, and the status it got. */
export interface WarmUpAnswer {
  method: string;
  path: string;
  contentType: string | undefined;
  status: number;
}

/**
 * `docsSandboxKey`: the one the app that will serve was given, so that both share one prepared docs page. Resolves
 * to what each request got (test/service/warm-up.test.ts holds that each reached what it was sent to prepare).
 */
export async function warmUp({
  db,
  spec = ApiSpec.load(),
  validation,
  docsSandboxKey,
}: {
  /** The serving app's database (read only: see above). */
  db: Database;
  spec?: ApiSpec;
  /** The serving app's validation: the one to compile. */
  validation?: RequestValidation;
  docsSandboxKey?: string | undefined;
}): Promise<WarmUpAnswer[]> {
  const keyCheck: KeyCheck = async (token) => (token === TOKEN ? NO_ACCOUNT : undefined);
  const app = await createApp({
    db,
    spec,
    logger: createLogger('silent'),
    keyCheck,
    // Its own cursor key: the warm-up's requests read and write nothing of the database's (the cursor key is made at start, server/main.ts).
    cursorKey: randomBytes(32).toString('base64'),
    ...(validation ? { validation } : {}),
    ...(docsSandboxKey ? { docsSandboxKey } : {}),
  });
  // `exclusive`: in a WORKERS process, a port of its own, not one node:cluster shares between the workers.
  const server = app.listen({ port: 0, host: '127.0.0.1', exclusive: true });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
    const { port } = server.address() as AddressInfo;
    const routes = routeTable(spec).routes;
    const sends: Send[] = routes.flatMap((route) =>
      requestsOf(route.method, route.template, Object.keys(route.bodies)),
    );
    // A path no route takes, with the trailing slashes the 404's hint reads (long: code that meets a long input
    // first runs slower), and a list query its validation refuses for its length.
    sends.push({ method: 'GET', path: '/nowhere//' }, { method: 'GET', path: `/nowhere${'/'.repeat(2000)}x` });
    sends.push({ method: 'GET', path: `/spaces?search=${'x'.repeat(2000)}` });
    // Query strings refused before anything else reads them (400): too many parts, a malformed %-escape.
    sends.push(
      { method: 'GET', path: `/spaces?search=${'&'.repeat(2000)}x` },
      { method: 'GET', path: '/spaces?search=%ZZ' },
    );
    const targets = sends.map((send) => ({ ...send, path: `${spec.basePath}${send.path}` }));
    // The pages outside the API, each the first time (the docs page is the one the service prepared).
    for (const path of ['/docs', '/docs/', '/', '/openapi.json', '/openapi.yaml', '/problems/validation', '/x//'])
      targets.push({ method: 'GET', path });
    // The docs page uncompressed too: its first 4 MB write costs more than the later ones.
    targets.push({ method: 'GET', path: '/docs', identity: true });
    const answers: WarmUpAnswer[] = [];
    for (const target of targets) {
      const status = await send(port, agent, target);
      answers.push({ method: target.method, path: target.path, contentType: target.contentType, status });
    }
    return answers;
  } finally {
    agent.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** One request; its answer read and dropped chunk by chunk (the docs page is megabytes). */
function send(port: number, agent: Agent, { method, path, contentType, body, identity }: Send): Promise<number> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${TOKEN}`,
    'Accept-Encoding': identity ? 'identity' : 'gzip',
  };
  if (contentType) headers['Content-Type'] = contentType;
  if (body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const sent = request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => {
      response.on('data', () => {});
      response.once('end', () => resolve(response.statusCode ?? 0));
      response.once('error', reject);
    });
    sent.once('error', reject);
    sent.end(body);
  });
}
