// A deliberately broken deployment for the conformance runner's own tests: a proxy in front of the real app
// that plants one fault at a time (switched per test), so each must show up in the runner's report.
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const FAULTS = [
  'undocumented-field-in-show',
  'store-answers-200',
  'delete-answers-200-with-body',
  'server-error-on-non-ascii-space-name',
  'show-ignores-account',
  'no-request-id',
  'wrong-content-type',
  'method-not-allowed-without-allow',
  'server-error-on-unknown-id',
  'accept-ignored',
  'body-limit-ignored',
  'duplicate-name-server-error',
  'show-reports-another-updated-at',
  'idempotency-key-ignored',
  'conditional-headers-ignored',
  'head-answers-405',
  'repeated-headers-joined',
  'problem-accept-refused',
  'store-keeps-its-own-space-name',
  'event-log-refuses-its-cursors',
] as const;

/** The real server's body limit (spec: 16 KiB); the body-limit-ignored fault squeezes bigger JSON bodies under it. */
const BODY_LIMIT = 16 * 1024;

export type Fault = (typeof FAULTS)[number];

export interface BrokenServer {
  /** Where the API's paths are mounted, like the real server's apiUrl. */
  apiUrl: string;
  fault: Fault | undefined;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding']);

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function spaceName(contentType: string, body: string): string {
  try {
    if (contentType.startsWith('application/json')) return String((JSON.parse(body) as { name?: unknown }).name ?? '');
  } catch {
    return '';
  }
  return new URLSearchParams(body).get('name') ?? '';
}

function withSpaceName(contentType: string, body: string, name: string): Buffer {
  if (contentType.startsWith('application/json')) {
    try {
      return Buffer.from(JSON.stringify({ ...(JSON.parse(body) as object), name }));
    } catch {
      return Buffer.from(body);
    }
  }
  const form = new URLSearchParams(body);
  form.set('name', name);
  return Buffer.from(form.toString());
}

/** `origin` is the real server's origin; `leakKey` is the key whose records the leaking show falls back to. */
export async function startBrokenServer(origin: string, leakKey: string): Promise<BrokenServer> {
  const broken: BrokenServer = { apiUrl: '', fault: undefined, close: async () => {} };
  const proxy = async (req: IncomingMessage, res: ServerResponse) => {
    const body = await readBody(req);
    const method = req.method ?? 'GET';
    // An absolute-form target (GET http://host/path) is forwarded as its path, as a faithful proxy would.
    const url = (req.url ?? '/').replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '');
    const path = url.split('?')[0] ?? '';
    const headers: Record<string, string> = {};
    // Every value of a repeated header joined, to read and plant faults in; forwarded as sent (below).
    for (const [name, values] of Object.entries(req.headersDistinct)) {
      if (values && !HOP_BY_HOP.has(name) && name !== 'host') headers[name] = values.join(', ');
    }
    const isItem = /^\/api\/v1\/(domains|spaces)\/[^/]+$/.test(path);
    const isShow = method === 'GET' && isItem;
    const fault = broken.fault;
    let forwarded: Uint8Array = body;
    if (fault === 'accept-ignored') delete headers.accept;
    if (fault === 'idempotency-key-ignored') delete headers['idempotency-key'];
    if (fault === 'conditional-headers-ignored') {
      delete headers['if-match'];
      delete headers['if-none-match'];
    }
    // A stateless mock's way: the record stored is not the one sent (and the create and the show agree on it).
    if (fault === 'store-keeps-its-own-space-name' && method === 'POST' && path === '/api/v1/spaces') {
      forwarded = withSpaceName(headers['content-type'] ?? '', body.toString(), 'Planted example');
    }
    if (fault === 'body-limit-ignored' && body.length > BODY_LIMIT && headers['content-type'] === 'application/json') {
      forwarded = Buffer.from(JSON.stringify(JSON.parse(body.toString())));
    }

    if (
      fault === 'server-error-on-non-ascii-space-name' &&
      method === 'POST' &&
      path === '/api/v1/spaces' &&
      /[^\p{ASCII}]/u.test(spaceName(headers['content-type'] ?? '', body.toString()))
    ) {
      res.writeHead(500, { 'content-type': 'application/problem+json', 'x-request-id': 'planted-fault' });
      res.end(JSON.stringify({ type: 'about:blank', title: 'Oops', status: 500, detail: 'planted', request_id: 'x' }));
      return;
    }

    if (fault === 'problem-accept-refused' && headers.accept === 'application/problem+json') {
      res.writeHead(406, { 'content-type': 'application/problem+json', 'x-request-id': 'planted-fault' });
      res.end(
        JSON.stringify({
          type: '/problems/not-acceptable',
          title: 'Not Acceptable',
          status: 406,
          detail: 'planted',
          request_id: 'planted-fault',
        }),
      );
      return;
    }

    // 1.3.0's regression: the event log refused the cursor of its own links.next.
    const after = new URLSearchParams(url.split('?')[1] ?? '').get('after');
    if (fault === 'event-log-refuses-its-cursors' && path === '/api/v1/events' && after) {
      res.writeHead(422, { 'content-type': 'application/problem+json', 'x-request-id': 'planted-fault' });
      res.end(
        JSON.stringify({
          type: '/problems/invalid-cursor',
          title: 'Unprocessable Content',
          status: 422,
          detail: 'The cursor in after is not one this service made.',
          request_id: 'planted-fault',
          errors: [{ location: 'query', field: 'after', message: 'is not a cursor of this list' }],
        }),
      );
      return;
    }

    if (fault === 'head-answers-405' && method === 'HEAD') {
      res.writeHead(405, { allow: 'GET, POST', 'x-request-id': 'planted-fault' });
      res.end();
      return;
    }

    // Sent with node:http, each header as the client sent it: fetch would join a repeated one (two
    // Idempotency-Key headers) into a single value the API never saw.
    const forward = (extra: Record<string, string> = {}) => {
      // Given as an array, the headers go exactly so: Host too.
      const raw: string[] = ['host', new URL(origin).host];
      if (fault === 'repeated-headers-joined') {
        for (const [name, value] of Object.entries(headers)) if (!(name in extra)) raw.push(name, value);
      } else {
        for (let i = 0; i < req.rawHeaders.length; i += 2) {
          const name = (req.rawHeaders[i] as string).toLowerCase();
          if (name in headers && !(name in extra)) raw.push(name, req.rawHeaders[i + 1] as string);
        }
      }
      for (const [name, value] of Object.entries(extra)) raw.push(name, value);
      const sendsBody = forwarded.length > 0 && method !== 'GET' && method !== 'HEAD';
      // A body (even an empty one) goes with its length, as the client framed it; none goes without one.
      const framed = req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
      if (sendsBody || framed) raw.push('content-length', String(sendsBody ? forwarded.length : 0));
      return new Promise<Response>((resolve, reject) => {
        const out = httpRequest(`${origin}${url}`, { method, headers: raw }, (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('error', reject);
          answer.on('end', () => {
            const answered = new Headers();
            for (let i = 0; i < answer.rawHeaders.length; i += 2) {
              answered.append(answer.rawHeaders[i] as string, answer.rawHeaders[i + 1] as string);
            }
            const status = answer.statusCode ?? 502;
            const text = Buffer.concat(chunks);
            const empty = status === 204 || status === 304 || text.length === 0;
            resolve(new Response(empty ? null : text, { status, headers: answered }));
          });
        });
        out.on('error', reject);
        out.end(sendsBody ? forwarded : undefined);
      });
    };
    let upstream = await forward();
    if (fault === 'show-ignores-account' && isShow && upstream.status === 404) {
      upstream = await forward({ authorization: `Bearer ${leakKey}` });
    }

    let status = upstream.status;
    const out: Record<string, string> = {};
    upstream.headers.forEach((value, name) => {
      if (!HOP_BY_HOP.has(name)) out[name] = value;
    });
    let text = await upstream.text();

    if (fault === 'undocumented-field-in-show' && isShow && status === 200) {
      const json = JSON.parse(text) as { data: Record<string, unknown> };
      json.data.internal_note = 'should never be sent';
      text = JSON.stringify(json);
    }
    if (fault === 'store-answers-200' && method === 'POST' && status === 201) status = 200;
    if (fault === 'delete-answers-200-with-body' && method === 'DELETE' && status === 204) {
      status = 200;
      out['content-type'] = 'application/json';
      text = JSON.stringify({ deleted: true });
    }
    if (fault === 'no-request-id' && isShow) delete out['x-request-id'];
    if (fault === 'wrong-content-type' && isShow && status === 200) out['content-type'] = 'text/html; charset=utf-8';
    if (fault === 'method-not-allowed-without-allow' && status === 405) delete out.allow;
    if (fault === 'server-error-on-unknown-id' && isItem && status === 404) status = 500;
    if (fault === 'duplicate-name-server-error' && method === 'POST' && path === '/api/v1/domains' && status === 409) {
      status = 500;
    }
    if (fault === 'show-reports-another-updated-at' && isShow && status === 200) {
      const json = JSON.parse(text) as { data: Record<string, unknown> };
      json.data.updated_at = '2000-01-01T00:00:00.000Z';
      text = JSON.stringify(json);
    }

    res.writeHead(status, out);
    res.end(status === 204 ? undefined : text);
  };
  const server = createServer((req, res) => {
    // A failing proxy step (the real server gone, a body it cannot parse) answers 502, which the runner reports,
    // instead of an unhandled rejection that leaves the request hanging until the runner's timeout.
    proxy(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`broken-server: ${String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  broken.apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  broken.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return broken;
}
