// Who made each change and what it changed: cause.actor and data.previous_attributes on the events of requests
// (sent from another loopback address, with a long User-Agent), of the scheduler, and of no change at all.
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimDueChecks, runScheduledCheck } from '../../server/domains/scheduled-check.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { publicIdOf } from '../support/api-keys.js';
import { checkResponse } from '../support/contract.js';
import { offlineDomainChecks, startServer, type TestAccount, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

interface Answer {
  status: number;
  body: { data?: unknown };
}

/** A JSON request to the API from `localAddress` (another loopback address than the client's usual one). */
function sendFrom(
  localAddress: string,
  method: string,
  path: string,
  key: string,
  body?: object,
  userAgent = 'audit-test',
): Promise<Answer> {
  const url = new URL(`${server.apiUrl}${path}`);
  const text = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      {
        method,
        localAddress,
        headers: {
          Authorization: `Bearer ${key}`,
          'User-Agent': userAgent,
          ...(text === undefined ? {} : { 'Content-Type': 'application/json' }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', async () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers(Object.entries(res.headers).map(([k, v]): [string, string] => [k, String(v)]));
          await checkResponse(
            method,
            url.href,
            new Response(raw === '' ? null : raw, { status: res.statusCode, headers }),
          );
          resolve({ status: res.statusCode ?? 0, body: raw === '' ? {} : JSON.parse(raw) });
        });
      },
    );
    sent.on('error', reject);
    sent.end(text);
  });
}

async function events(account: TestAccount, query: Record<string, string> = {}) {
  const { data, response } = await account.client.GET('/events', { params: { query: { per_page: 100, ...query } } });
  if (!data) throw new Error(`GET /events answered ${response.status}`);
  return data.data;
}

describe('cause.actor', () => {
  it("names the key, the client address and the User-Agent (cut to 256) of the request's events", async () => {
    const account = await server.account('actor-request');
    const agent = `client/${'x'.repeat(300)}`;
    const stored = await sendFrom('127.0.0.2', 'POST', '/spaces', account.key, { name: 'Audit', color: 2 }, agent);
    expect(stored.status).toBe(201);
    const [event] = await events(account, { type: 'space.created' });
    expect(event?.cause.actor).toEqual({
      type: 'api_key',
      key_id: publicIdOf(account.key),
      ip: '127.0.0.2',
      user_agent: agent.slice(0, 256),
    });
  });

  it('tells two keys of one account apart, each from its own address', async () => {
    const account = await server.account('actor-two-keys');
    const other = await server.account('actor-two-keys');
    const created = await sendFrom('127.0.0.3', 'POST', '/spaces', account.key, { name: 'One', color: 1 });
    const id = (created.body.data as { id: number }).id;
    await sendFrom('127.0.0.4', 'PATCH', `/spaces/${id}`, other.key, { color: 4 });
    const [updated, made] = await events(account);
    expect(made?.cause.actor).toMatchObject({ key_id: publicIdOf(account.key), ip: '127.0.0.3' });
    expect(updated?.cause.actor).toMatchObject({ key_id: publicIdOf(other.key), ip: '127.0.0.4' });
  });

  it('is the system, with no key, address or agent, for a scheduled check', async () => {
    const account = await server.account('actor-system');
    const { data } = await account.client.POST('/domains', { body: { name: 'audit.dss-test.example' } });
    const id = data?.data.id as number;
    await server.db
      .updateTable('domains')
      .set({ next_check_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', id)
      .execute();
    const [claimed] = (await claimDueChecks(server.db, 100, 60_000)).filter((check) => check.id === id);
    if (!claimed) throw new Error('the due check was not claimed');
    // The test zone's verdict is "found" where checks run as the sandbox's do.
    await runScheduledCheck(
      server.db,
      { ...offlineDomainChecks(), sandbox: true },
      claimed,
      webhookFanOut(server.webhooks),
    );
    const [active] = await events(account, { type: 'domain.active' });
    expect(active?.cause).toEqual({
      request_id: null,
      idempotency_key: null,
      actor: { type: 'system', key_id: null, ip: null, user_agent: null },
    });
    expect(active?.data).toMatchObject({ previous_attributes: { status: 'pending', verified_at: null } });
  });
});

describe('data.previous_attributes', () => {
  it('holds the fields an update changed, with their values before, and nothing else', async () => {
    const account = await server.account('previous');
    const { data } = await account.json.POST('/spaces', { body: { name: 'Before', color: 3 } });
    const id = data?.data.id as number;
    await account.json.PATCH('/spaces/{id}', { params: { path: { id } }, body: { name: 'After', color: 3 } });
    await account.json.PATCH('/spaces/{id}', { params: { path: { id } }, body: { color: 5 } });
    const [second, first] = await events(account, { type: 'space.updated' });
    expect(first?.data).toMatchObject({ object: { name: 'After' }, previous_attributes: { name: 'Before' } });
    expect(
      Object.keys((first?.data as { previous_attributes: object } | undefined)?.previous_attributes ?? {}),
    ).toEqual(['name']);
    expect((second?.data as { previous_attributes: object } | undefined)?.previous_attributes).toEqual({ color: 3 });
  });

  it("of a domain's update names the page it changed", async () => {
    const account = await server.account('previous-domain');
    const { data } = await account.json.POST('/domains', {
      body: { name: 'previous.example.com', index_page: 'https://previous.example.com/a.html' },
    });
    const id = data?.data.id as number;
    await account.json.PATCH('/domains/{id}', { params: { path: { id } }, body: { index_page: null } });
    const [updated] = await events(account, { type: 'domain.updated' });
    expect((updated?.data as { previous_attributes: object } | undefined)?.previous_attributes).toEqual({
      index_page: 'https://previous.example.com/a.html',
    });
  });

  it('is never sent for a change that changed nothing: no event at all', async () => {
    const account = await server.account('previous-none');
    const { data } = await account.json.POST('/spaces', { body: { name: 'Same', color: 1 } });
    const id = data?.data.id as number;
    await account.json.PATCH('/spaces/{id}', { params: { path: { id } }, body: { name: 'Same', color: 1 } });
    expect((await events(account)).map((event) => event.type)).toEqual(['space.created']);
  });
});
