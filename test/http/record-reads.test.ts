// Every path by which an event's record leaves the service, × scope sets: a key sees a record only with its read
// scope (events/read-scopes.ts). The paths are found in the spec: an operation whose answer holds events or a
// receiver's answers, one that names an event to send, and one that subscribes an endpoint; each has a probe here,
// and an operation the walk finds without one fails. A record's own operations (GET /domains, …) are the scope
// matrix's (scopes.test.ts); here their declared scope is checked to be the record's read scope. Both engines.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsScope } from '../../server/accounts/key-policy.js';
import { issueKey } from '../../server/accounts/keys.js';
import type { Operation, Schema } from '../../server/spec-model.js';
import { spec } from '../support/contract.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** The read scope of each kind of record an event carries, written out here independently of the server's rule. */
const READ_SCOPE: Record<string, string> = { domain: 'domains:read', space: 'spaces:read', webhook: 'webhooks:read' };
const readable = (held: readonly string[] | undefined, type: string) =>
  held === undefined || holdsScope(new Set(held), READ_SCOPE[type.split('.')[0] as string] as string);

/** Whether a schema (dereferenced) holds, anywhere, an object with all these properties. */
function holds(schema: unknown, properties: readonly string[], seen = new Set<unknown>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  const own = (schema as Schema).properties as Record<string, unknown> | undefined;
  if (own && properties.every((name) => name in own)) return true;
  return Object.values(schema).some((value) => holds(value, properties, seen));
}

const answerSchemas = (operation: Operation) =>
  Object.entries(operation.responses)
    .filter(([status]) => status.startsWith('2'))
    .flatMap(([, response]) => Object.values(response.content));

/** What of an event's record an operation hands out, read from the spec; undefined: none. */
function carries(operation: Operation): string | undefined {
  const answers = answerSchemas(operation);
  if (answers.some((schema) => holds(schema, ['type', 'data', 'timestamp']))) return 'events';
  if (answers.some((schema) => holds(schema, ['event_type', 'response_body']))) return "receivers' answers";
  if (operation.method !== 'GET' && operation.path.startsWith('/events/{')) return 'an event it sends';
  const body = Object.values(operation.body?.content ?? {});
  if (body.some((schema) => holds(schema, ['enabled_events']) || holds(schema, ['url']))) return 'a subscription';
  return undefined;
}

const ALL = undefined;
/** The scope sets: every combination of the records' read scopes beside what the paths themselves need. */
const BASE = ['events:read', 'webhooks:write'];
const SCOPE_SETS: Array<readonly string[] | undefined> = [
  BASE,
  [...BASE, 'spaces:read'],
  [...BASE, 'domains:read'],
  [...BASE, 'domains:write', 'spaces:read'],
  ALL,
];
const named = (held: readonly string[] | undefined) => (held ? held.join('+') : 'every scope');

let server: TestServer;
let receiver: Receiver;
let owner: TestAccount;
let endpoint: number;
/** The owner's whole log, newest first, as setup left it (probes of the test operation add to it). */
let log: Array<{ id: string; type: string }> = [];
const wholeLog = async () => {
  const events = await owner.json.GET('/events', { params: { query: { per_page: 100 } } });
  return (events.data?.data ?? []).map((event) => ({ id: event.id, type: event.type }));
};
const keys = new Map<readonly string[] | undefined, string>();

const send = (key: string, method: string, path: string, body?: unknown) =>
  (method === 'HEAD' ? fetch : server.fetch)(`${method === 'HEAD' ? server.origin : ''}/api/v1${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

beforeAll(async () => {
  server = await startServer({ deliver: true, webhooks: { pollMs: 50 } });
  receiver = await startReceiver();
  owner = await server.account('record-reads');
  for (const held of SCOPE_SETS) {
    keys.set(held, held ? (await issueKey(server.db, owner.name, { scopes: [...held] })).key : owner.key);
  }
  // Interleaved domain and space events, more than a page of each: the filtered log must read past its first page.
  for (let i = 0; i < 11; i++) {
    await owner.client.POST('/domains', { body: { name: `page-${i}.record-reads.example` } });
    await owner.client.POST('/spaces', { body: { name: `Page ${i}`, color: 1 } });
  }
  const made = await owner.json.POST('/webhook-endpoints', { body: { url: receiver.url, enabled_events: ['*'] } });
  endpoint = made.data?.data.id ?? 0;
  await owner.client.POST('/domains', { body: { name: 'record-reads.example' } });
  await owner.client.POST('/spaces', { body: { name: 'Record reads', color: 2 } });
  await owner.json.POST('/webhook-endpoints/{id}/test', { params: { path: { id: endpoint } } });
  await receiver.until((received) => received.length >= 3);
  // The attempts are recorded by the delivery job's next claim: wait until the log shows all three.
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; ) {
    const page = await owner.json.GET('/webhook-endpoints/{id}/deliveries', {
      params: { path: { id: endpoint }, query: { per_page: 100 } },
    });
    if ((page.data?.data.length ?? 0) >= 3) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  log = await wholeLog();
});
afterAll(async () => {
  await server?.close();
  await receiver?.close();
});

/** Each probe asserts, for one key, that the path hands out exactly what the key may read. */
type Probe = (key: string, held: readonly string[] | undefined) => Promise<void>;

async function walkEvents(key: string, held: readonly string[] | undefined) {
  const now = await wholeLog();
  const seen: string[] = [];
  let path: string | null = '/events?per_page=10';
  for (let pages = 0; path && pages < 10; pages++) {
    const response: Response = await send(key, 'GET', path);
    expect(response.status, `${path}: ${response.status === 200 ? '' : await response.clone().text()}`).toBe(200);
    const page = (await response.json()) as { data: Array<{ id: string }>; links: { next: string | null } };
    // Filtered in the query: a page is full unless it is the last.
    if (page.links.next) expect(page.data.length).toBe(10);
    seen.push(...page.data.map((event) => event.id));
    path = page.links.next?.replace(/^.*\/api\/v1/, '') ?? null;
  }
  expect(seen).toEqual(now.filter((event) => readable(held, event.type)).map((event) => event.id));
}

const PROBES: Record<string, Probe> = {
  async events_list(key, held) {
    await walkEvents(key, held);
    // One type asked for by name: served when readable, else 403 naming its scope (not an empty page).
    for (const type of ['domain.created', 'space.created']) {
      const response = await send(key, 'GET', `/events?type=${type}`);
      if (readable(held, type)) {
        expect(response.status, type).toBe(200);
        const events = ((await response.json()) as { data: Array<{ type: string }> }).data;
        expect(events.length).toBeGreaterThan(0);
        expect(new Set(events.map((event) => event.type))).toEqual(new Set([type]));
      } else {
        const problem = await expectProblem(response, 403);
        expect(response.headers.get('x-accepted-scopes')).toBe(READ_SCOPE[type.split('.')[0] as string]);
        expect(problem.type).toBe('/problems/insufficient-scope');
      }
    }
  },
  async 'events_list (HEAD)'(key) {
    expect((await send(key, 'HEAD', '/events')).status).toBe(200);
  },
  async events_redeliver(key, held) {
    for (const event of log) {
      const response = await send(key, 'POST', `/events/${event.id}/redeliver`, { endpoint_id: endpoint });
      if (readable(held, event.type)) {
        expect(response.status, event.type).toBe(202);
        await response.arrayBuffer();
      } else {
        const problem = await expectProblem(response, 403);
        expect(problem.detail).toContain(READ_SCOPE[event.type.split('.')[0] as string]);
      }
    }
  },
  async 'webhook-endpoints_deliveries'(key, held) {
    const response = await send(key, 'GET', `/webhook-endpoints/${endpoint}/deliveries?per_page=100`);
    const attempts = ((await response.json()) as { data: Array<Record<string, unknown>> }).data;
    expect(new Set(attempts.map((a) => a.event_type))).toEqual(
      new Set(['domain.created', 'space.created', 'webhook.test']),
    );
    for (const attempt of attempts) {
      const withheld = !readable(held, attempt.event_type as string);
      expect(attempt.withheld, String(attempt.event_type)).toBe(withheld);
      expect(attempt.response_body).toBe(withheld ? null : 'ok');
    }
  },
  async 'webhook-endpoints_deliveries (HEAD)'(key) {
    expect((await send(key, 'HEAD', `/webhook-endpoints/${endpoint}/deliveries`)).status).toBe(200);
  },
  async 'webhook-endpoints_store'(key, held) {
    const response = await send(key, 'POST', '/webhook-endpoints', { url: receiver.url, enabled_events: ['*'] });
    const all = readable(held, 'domain.x') && readable(held, 'space.x');
    if (all) expect(response.status).toBe(201);
    else expect((await expectProblem(response, 403)).type).toBe('/problems/insufficient-scope');
  },
  async 'webhook-endpoints_update'(key, held) {
    await repoints(key, held, 'PUT');
  },
  async 'webhook-endpoints_patch'(key, held) {
    await repoints(key, held, 'PATCH');
  },
  async 'webhook-endpoints_test'(key) {
    const response = await send(key, 'POST', `/webhook-endpoints/${endpoint}/test`);
    expect(response.status).toBe(202);
    await response.arrayBuffer();
  },
};

/**
 * Re-pointing an endpoint that takes domain.created, while narrowing it to space.created: it needs the read
 * scopes of both (what it takes now goes to the new url), else 403 naming what is missing (that of the types sent
 * first, then that of the types it takes now), and nothing changes.
 */
async function repoints(key: string, held: readonly string[] | undefined, method: string) {
  const made = await owner.json.POST('/webhook-endpoints', {
    body: { url: receiver.url, enabled_events: ['domain.created', 'space.created'] },
  });
  const id = made.data?.data.id ?? 0;
  const moved = `${receiver.url}/moved`;
  const response = await send(key, method, `/webhook-endpoints/${id}`, {
    url: moved,
    enabled_events: ['space.created'],
  });
  const missing = ['domain.x', 'space.x'].filter((type) => !readable(held, type));
  if (missing.length === 0) {
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    return;
  }
  // What it sends is judged first, before any field (http/access/scopes.ts); what it takes now once it is read.
  const sentMissing = ['space.x'].filter((type) => !readable(held, type));
  const named = sentMissing.length > 0 ? sentMissing : missing;
  const problem = await expectProblem(response, 403);
  for (const type of named) expect(problem.detail).toContain(READ_SCOPE[type.split('.')[0] as string]);
  expect(response.headers.get('x-accepted-scopes')).toBe(
    named.map((type) => READ_SCOPE[type.split('.')[0] as string]).join(', '),
  );
  const kept = await owner.json.GET('/webhook-endpoints/{id}', { params: { path: { id } } });
  expect(kept.data?.data.url).toBe(receiver.url);
}

/** The operations that hand out an event's record, and HEAD beside each such GET (the same answer, headers only). */
const carrying = spec.model.operations.flatMap((operation) => {
  const what = carries(operation);
  if (what === undefined) return [];
  const one = { id: operation.id, what };
  return operation.method === 'GET' ? [one, { id: `${operation.id} (HEAD)`, what: `${what} (headers)` }] : [one];
});

describe('the paths that hand out an event record, from the spec', () => {
  it('finds them, each with its probe', () => {
    expect(carrying.map((operation) => operation.id).sort()).toEqual(Object.keys(PROBES).sort());
  });

  it("declares a record's read scope on every operation that answers that record", () => {
    for (const operation of spec.model.operations) {
      const answers = answerSchemas(operation);
      const kind = operation.path.split('/')[1]?.replace(/s$/, '') as string;
      if (!(kind in READ_SCOPE) || kind === 'webhook' || answers.length === 0) continue;
      expect(readable(operation.scopes, `${kind}.x`), operation.id).toBe(true);
    }
  });
});

describe.each(SCOPE_SETS.map((held) => ({ held, name: named(held) })))('a key with $name', ({ held }) => {
  it.each(carrying)('$id hands out only the $what it may read', async ({ id }) => {
    await (PROBES[id] as Probe)(keys.get(held) as string, held);
  });
});
