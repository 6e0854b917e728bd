// Responses are checked against the spec: the server (with response validation on) turns a reply that breaks
// it into a bare 500, and the tests' own contract check rejects undocumented statuses and content types.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { issueKey } from '../../server/accounts/keys.js';
import { SYSTEM_CAUSE } from '../../server/db/owned.js';
import { DEFAULT_SCHEDULE } from '../../server/domains/check-rules.js';
import { domainRepository } from '../../server/domains/repository.js';
import { eventLog } from '../../server/events/outbox.js';
import { PROBLEM_TYPE_BASE } from '../../server/http/problems/problem.js';
import { ApiSpec } from '../../server/spec-model.js';
import { webhookFanOut } from '../../server/webhooks/fan-out.js';
import { DEFAULT_WEBHOOK_SETTINGS } from '../../server/webhooks/settings.js';
import { checkResponse } from '../support/contract.js';
import { apiClient, startServer, type TestServer } from '../support/server.js';

type Schema = { required: string[]; properties: Record<string, unknown> };

/** The bundled spec, changed so that every domain must carry a property the server never sends. */
function specDemandingExtraProperty(): ApiSpec {
  const document = parse(readFileSync(new URL('../../generated/openapi.yaml', import.meta.url), 'utf8'));
  const domain = document.components.schemas.domain as Schema;
  domain.required.push('launch_code');
  domain.properties.launch_code = { type: 'string' };
  return new ApiSpec(stringify(document));
}

describe('a server whose replies break its spec', () => {
  let server: TestServer;
  let key: string;
  let domainId: number;

  beforeAll(async () => {
    server = await startServer({ spec: specDemandingExtraProperty() });
    const issued = await issueKey(server.db, 'alice');
    key = issued.key;
    // Seeded below the API: through it, the store's own reply would already break the spec.
    const domain = await domainRepository(
      server.db,
      DEFAULT_SCHEDULE,
      eventLog('domain', webhookFanOut(DEFAULT_WEBHOOK_SETTINGS)),
    ).create(issued.account.id, { name: 'seeded.example.com', index_page: null, not_found_page: null }, SYSTEM_CAUSE);
    domainId = domain.record.id;
  });
  afterAll(() => server.close());

  const REQUESTS = [
    { operation: 'domains_show', path: () => `/api/v1/domains/${domainId}` },
    { operation: 'domains_list', path: () => '/api/v1/domains' },
  ];

  it.each(REQUESTS)('$operation answers 500 problem+json revealing no internals', async ({ path }) => {
    const response = await server.fetch(path(), { headers: { Authorization: `Bearer ${key}` } });
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const text = await response.text();
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['detail', 'request_id', 'status', 'title', 'type']);
    expect(body).toMatchObject({ type: `${PROBLEM_TYPE_BASE}internal`, title: 'Internal Server Error', status: 500 });
    expect(body.request_id).toBe(response.headers.get('x-request-id'));
    for (const internal of [
      'stack',
      'at ',
      '/work/',
      'node_modules',
      '.ts',
      '.js',
      'launch_code',
      'seeded.example.com',
      'required',
      'response',
    ]) {
      expect(text).not.toContain(internal);
    }
  });

  it('answers 500 to a store whose reply breaks the spec', async () => {
    const client = apiClient(server.apiUrl, key);
    const { response } = await client.POST('/domains', { body: { name: 'stored.example.com' } });
    expect(response.status).toBe(500);
  });

  it('still answers 204 where the broken schema plays no part', async () => {
    const response = await server.fetch(`/api/v1/domains/${domainId}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(204);
  });
});

describe('checkResponse', () => {
  const URL_OF_SHOW = 'http://127.0.0.1:1/api/v1/domains/1';
  const DOMAIN = {
    data: {
      id: 1,
      name: 'shop.example.com',
      index_page: null,
      not_found_page: null,
      status: 'pending',
      verification: { type: 'txt', name: '_dss-challenge.shop.example.com', value: 'dss-verify=x' },
      metadata: {},
      kind: 'subdomain',
      dns_records: [
        { type: 'TXT', name: '_dss-challenge.shop.example.com', value: 'dss-verify=x', purpose: 'ownership' },
      ],
      routing: {
        code: 'no_target',
        message: 'No target is set.',
        observed: { cname: [], a: [], aaaa: [] },
        checked_at: null,
      },
      verified_at: null,
      last_checked_at: null,
      next_check_at: '2026-01-01T00:01:00.000Z',
      observation: { code: 'not_checked', message: 'Not checked yet.', values: [] },
      claimed_elsewhere_at: null,
      created_at: '2026-01-01T00:00:00.000Z',
      updated_at: '2026-01-01T00:00:00.000Z',
    },
  };
  const respond = (status: number, contentType: string, body: unknown, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'Content-Type': contentType, 'X-Request-Id': 'unit-test', ETag: '"1.1"', ...headers },
    });

  it('accepts a response as the spec documents it', async () => {
    await expect(checkResponse('GET', URL_OF_SHOW, respond(200, 'application/json', DOMAIN))).resolves.toBeUndefined();
  });

  it('throws for a status the operation does not document', async () => {
    await expect(checkResponse('GET', URL_OF_SHOW, respond(418, 'application/json', DOMAIN))).rejects.toThrow(
      /status_code_documented: status 418 is not documented/,
    );
    await expect(checkResponse('GET', URL_OF_SHOW, respond(201, 'application/json', DOMAIN))).rejects.toThrow(
      /status_code_documented: status 201 is not documented/,
    );
  });

  it('throws for a content type the response does not document', async () => {
    await expect(checkResponse('GET', URL_OF_SHOW, respond(200, 'text/html', DOMAIN))).rejects.toThrow(
      /content_type_documented: status 200 came as "text\/html"/,
    );
    await expect(checkResponse('GET', URL_OF_SHOW, respond(200, 'application/problem+json', DOMAIN))).rejects.toThrow(
      /content_type_documented/,
    );
  });

  it('throws for a body that breaks the schema', async () => {
    const broken = { data: { ...DOMAIN.data, id: 0, secret: 'x' } };
    await expect(checkResponse('GET', URL_OF_SHOW, respond(200, 'application/json', broken))).rejects.toThrow(
      /response_schema: status 200: (?=.*\/data\/id must be >= 1)(?=.*\/data must NOT have additional properties \(secret\))/,
    );
  });

  it('throws for a missing X-Request-Id', async () => {
    const response = new Response(JSON.stringify(DOMAIN), {
      status: 200,
      headers: { 'Content-Type': 'application/json' },
    });
    await expect(checkResponse('GET', URL_OF_SHOW, response)).rejects.toThrow(/X-Request-Id/);
  });

  it('throws for a 401 without WWW-Authenticate', async () => {
    const problem = {
      type: `${PROBLEM_TYPE_BASE}unauthorized`,
      title: 'Unauthorized',
      status: 401,
      detail: 'no',
      request_id: 'unit-test',
    };
    await expect(checkResponse('GET', URL_OF_SHOW, respond(401, 'application/problem+json', problem))).rejects.toThrow(
      /response_headers: status 401: WWW-Authenticate missing/,
    );
  });
});
