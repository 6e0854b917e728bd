// Unsafe webhook targets with the defaults (private targets not allowed), through HTTP on both engines: every
// spelling in the shared list is refused at save and by PATCH and PUT (422 naming `url`, stating the rule), and
// none is stored; a name that resolves inside the network is refused without saying what it resolved to; public
// addresses in the same spellings are saved. Deliveries to a closed port and to a port that answers no TLS are
// logged as one error kind.
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTION_FAILED, sendAttempt } from '../../server/webhooks/sender.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';
import { SAFE_TARGETS, UNSAFE_TARGETS } from '../support/unsafe-targets.js';

let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  server = await startServer({ webhooks: { allowPrivateTargets: false } });
  account = await server.account('unsafe-targets');
});
afterAll(() => server.close());

const send = (method: string, path: string, body: unknown) =>
  server.fetch(`/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${account.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

const storedUrls = async () => {
  const listed = await account.json.GET('/webhook-endpoints', {});
  return (listed.data?.data ?? []).map((endpoint) => endpoint.url);
};

describe('unsafe targets', () => {
  it(`refuses all ${UNSAFE_TARGETS.length} spellings at save, by PATCH and by PUT, and stores none`, async () => {
    const saved = await send('POST', '/webhook-endpoints', { url: SAFE_TARGETS[0], enabled_events: ['*'] });
    expect(saved.status).toBe(201);
    const id = ((await saved.json()) as { data: { id: number } }).data.id;
    for (const url of UNSAFE_TARGETS) {
      for (const [method, path] of [
        ['POST', '/webhook-endpoints'],
        ['PATCH', `/webhook-endpoints/${id}`],
        ['PUT', `/webhook-endpoints/${id}`],
      ] as const) {
        const response = await send(method, path, { url, enabled_events: ['*'] });
        const problem = await expectProblem(response, 422);
        expect(
          (problem.errors as Array<{ field: string }>).map((e) => e.field),
          `${method} ${url}`,
        ).toEqual(['url']);
      }
    }
    expect(await storedUrls()).toEqual([SAFE_TARGETS[0]]);
  });

  it('states the rule, never what a name resolved to', async () => {
    const name = hostname();
    const response = await send('POST', '/webhook-endpoints', {
      url: `https://${name}/hook`,
      enabled_events: ['*'],
    });
    const problem = await expectProblem(response, 422);
    expect(problem.detail).toContain('public (global unicast)');
    expect(JSON.stringify(problem)).not.toMatch(/127\.0\.|10\.\d|172\.|192\.168|::1/);
  });

  it('saves public addresses in the same spellings', async () => {
    for (const url of SAFE_TARGETS.slice(1)) {
      const response = await send('POST', '/webhook-endpoints', { url, enabled_events: ['*'] });
      expect(response.status, url).toBe(201);
    }
  });
});

describe('the delivery log', () => {
  it('records a closed port and a port without TLS as one error kind', async () => {
    const closed = await sendAttempt('https://127.0.0.1:9/hook', '{}', {}, { timeoutMs: 5000, allowPrivate: true });
    // The service's own port speaks plain HTTP: a TLS handshake with it fails.
    const plain = await sendAttempt(
      `https://127.0.0.1:${new URL(server.origin).port}/`,
      '{}',
      {},
      {
        timeoutMs: 5000,
        allowPrivate: true,
      },
    );
    expect(closed.error).toBe(CONNECTION_FAILED);
    expect(plain.error).toBe(CONNECTION_FAILED);
  });
});
