// Clients looping through the whole life of every resource an account owns, through a load balancer: store
// (some with an Idempotency-Key), show, update (If-Match with the ETag just read, where the resource has one),
// list, and every other record deleted; spaces, domains and webhook endpoints in turn, and the event log. Every
// request's outcome is kept with the phase it was sent in, and every record's last acknowledged state, so that a
// test can say what failed when and find every acknowledged write at the end.
import { pause, THINK_MS } from './load.js';

export type Resource = 'spaces' | 'domains' | 'webhook-endpoints';

export interface Request {
  phase: string;
  /** `<resource>.<operation>`, e.g. `domains.update`. */
  operation: string;
  expected: number;
  status?: number;
  /** A problem's type, for an unexpected status. */
  problem?: string;
  error?: string;
}

export interface Written {
  resource: Resource;
  id: number;
  /** The field the last acknowledged update set, and its value. */
  field: string;
  value: string | number | null;
  deleted: boolean;
}

export interface LoadOptions {
  api: string;
  keys: string[];
  clients: number;
  tag: string;
  /** Where webhook endpoints point (a receiver of the test's own). */
  webhookUrl: string;
}

const RESOURCES: Resource[] = ['spaces', 'domains', 'webhook-endpoints'];

// Each client waits `THINK_MS` before each request, as those of `load.ts` do (why: there).

export const failed = (request: Request) => request.status !== request.expected;

function storeBody(resource: Resource, name: string, n: number, webhookUrl: string): Record<string, unknown> {
  if (resource === 'spaces') return { name, color: (n % 6) + 1 };
  if (resource === 'domains') return { name: `${name}.example.com`, index_page: `https://${name}.example.com/` };
  // One event type: every endpoint of an account gets every event it enables, and deliveries cost CPU.
  return { url: `${webhookUrl}/${name}`, enabled_events: ['space.deleted'], description: name };
}

function update(resource: Resource, n: number): { field: string; value: string | number } {
  if (resource === 'spaces') return { field: 'color', value: ((n + 3) % 6) + 1 };
  if (resource === 'domains') return { field: 'index_page', value: `https://updated-${n}.example.com/` };
  return { field: 'description', value: `updated ${n}` };
}

export function startLoad(options: LoadOptions, phase: () => string) {
  const requests: Request[] = [];
  const written: Written[] = [];
  let stopping = false;

  const send = async (
    key: string,
    operation: string,
    expected: number,
    method: string,
    path: string,
    { body, headers = {} }: { body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    await pause(THINK_MS);
    const request: Request = { phase: phase(), operation, expected };
    requests.push(request);
    try {
      const response = await fetch(`${options.api}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(20_000),
      });
      const text = await response.text();
      request.status = response.status;
      const json = text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
      if (response.status !== expected) request.problem = json?.type ?? text.slice(0, 100);
      return { status: response.status, json, etag: response.headers.get('etag') };
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause;
      request.error = cause?.code ?? (error as Error).message;
      return { status: 0, json: undefined, etag: null };
    }
  };

  const loop = async (client: number) => {
    const key = options.keys[client % options.keys.length] as string;
    for (let n = 0; !stopping; n++) {
      const resource = RESOURCES[(n + client) % RESOURCES.length] as Resource;
      const name = `${options.tag}-${client}-${n}`;
      const headers: Record<string, string> = n % 4 === 1 ? { 'Idempotency-Key': `${name}-key` } : {};
      const stored = await send(key, `${resource}.store`, 201, 'POST', `/${resource}`, {
        body: storeBody(resource, name, n, options.webhookUrl),
        headers,
      });
      const id = stored.json?.data?.id as number | undefined;
      if (stored.status === 201 && id !== undefined) {
        const initial = storeBody(resource, name, n, options.webhookUrl);
        const field = update(resource, n).field;
        const record: Written = { resource, id, field, value: (initial[field] as string) ?? null, deleted: false };
        written.push(record);
        const shown = await send(key, `${resource}.show`, 200, 'GET', `/${resource}/${id}`);
        const change = update(resource, n);
        const ifMatch: Record<string, string> = shown.etag ? { 'If-Match': shown.etag } : {};
        const updated = await send(key, `${resource}.update`, 200, 'PATCH', `/${resource}/${id}`, {
          body: { [change.field]: change.value },
          headers: ifMatch,
        });
        if (updated.status === 200) record.value = change.value;
        await send(key, `${resource}.list`, 200, 'GET', `/${resource}`);
        // Half the records stay; of the webhook endpoints a quarter (each one is sent the account's events).
        if (n % (resource === 'webhook-endpoints' ? 4 : 2) !== 1) {
          const deleted = await send(key, `${resource}.delete`, 204, 'DELETE', `/${resource}/${id}`);
          if (deleted.status === 204) record.deleted = true;
        }
      }
      if (n % 6 === 5) await send(key, 'events.list', 200, 'GET', '/events?per_page=10');
    }
  };

  const loops = Array.from({ length: options.clients }, (_, client) => loop(client));
  return {
    requests,
    written,
    async stop() {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

/** Requests and failures per phase (in the order phases began), per operation and per outcome. */
export function figures(requests: Request[]) {
  const tally = (key: (r: Request) => string) => {
    const out: Record<string, { requests: number; failed: number }> = {};
    for (const request of requests) {
      out[key(request)] ??= { requests: 0, failed: 0 };
      const entry = out[key(request)] as { requests: number; failed: number };
      entry.requests++;
      if (failed(request)) entry.failed++;
    }
    return out;
  };
  return {
    byPhase: tally((r) => r.phase),
    byOperation: tally((r) => r.operation),
    byOutcome: tally((r) => `${r.operation} ${r.status ?? r.error} ${r.problem ?? ''}`.trim()),
  };
}
