// The scope matrix, generated from the spec: every operation (and HEAD beside each GET), sent with a key of each
// single scope, is refused with 403 naming its declared scope by every key without it, and not refused for scope
// by the key holding it. Operations added to the spec later are walked without a change here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../server/accounts/key-policy.js';
import { issueKey } from '../../server/accounts/keys.js';
import { spec } from '../support/contract.js';
import { expectProblem } from '../support/problems.js';
import { startServer, type TestServer } from '../support/server.js';

let server: TestServer;
const keys = new Map<string, string>();

beforeAll(async () => {
  server = await startServer();
  for (const scope of SCOPES) keys.set(scope, (await issueKey(server.db, 'matrix', { scopes: [scope] })).key);
});
afterAll(() => server.close());

/** Each operation of the spec as a request: any path parameter is 1 (its record need not exist). */
const requests = spec.model.operations.flatMap((operation) => {
  const path = `${spec.basePath}${operation.path.replace(/\{[^}]+\}/g, '1')}`;
  const one = { id: operation.id, method: operation.method, path, scopes: operation.scopes };
  return operation.method === 'GET' ? [one, { ...one, id: `${operation.id} (HEAD)`, method: 'HEAD' }] : [one];
});

/** HEAD answers carry no body for the contract check to read: those go through plain fetch. */
const send = (method: string, path: string, key: string) => {
  const init = { method, headers: { Authorization: `Bearer ${key}` } };
  return method === 'HEAD' ? fetch(`${server.origin}${path}`, init) : server.fetch(path, init);
};

describe('scopes declared by the spec', () => {
  it('declares exactly one known scope on every operation', () => {
    for (const operation of spec.model.operations) {
      expect(operation.scopes, operation.id).toHaveLength(1);
      expect(SCOPES, operation.id).toContain(operation.scopes[0]);
      // The bundle's description says it (spec/lint/scope-notes.js): the docs page and the client's types show it.
      expect((operation.object as { description: string }).description, operation.id).toContain(
        `**Scope:** \`${operation.scopes[0]}\``,
      );
    }
  });

  it.each(requests)('$id: refused without $scopes, served with it', async ({ method, path, scopes }) => {
    const [declared = ''] = scopes;
    for (const scope of SCOPES) {
      const response = await send(method, path, keys.get(scope) as string);
      if (scope === declared) {
        expect(response.status, `${method} ${path} with ${scope}`).not.toBe(403);
        await response.arrayBuffer();
        continue;
      }
      expect(response.status, `${method} ${path} with ${scope}`).toBe(403);
      expect(response.headers.get('x-accepted-scopes')).toBe(declared);
      if (method === 'HEAD') continue;
      const problem = await expectProblem(response, 403);
      expect(problem.type).toBe('/problems/insufficient-scope');
      expect(problem.detail).toContain(declared);
      expect(problem.detail).toContain(`Its scopes: ${scope}.`);
    }
  });
});

describe('the order of the checks', () => {
  it('refuses a write scope before judging any field: 403, not 422', async () => {
    const response = await server.fetch(`${spec.basePath}/spaces`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${keys.get('spaces:read')}`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: 'name=&color=9&unknown=1',
    });
    const problem = await expectProblem(response, 403);
    expect(problem.type).toBe('/problems/insufficient-scope');
    expect(problem).not.toHaveProperty('errors');
  });

  it('reads the body before the scope: one that cannot be read at all is a 415 for any key', async () => {
    const response = await server.fetch(`${spec.basePath}/spaces`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${keys.get('spaces:read')}`, 'Content-Type': 'text/plain' },
      body: 'not a form',
    });
    await expectProblem(response, 415);
  });

  it('answers 401 before 403: a wrong key never learns which scope it lacks', async () => {
    const response = await send('DELETE', `${spec.basePath}/spaces/1`, 'dss_000000000000_nope');
    const problem = await expectProblem(response, 401);
    expect(JSON.stringify(problem)).not.toMatch(/scope/);
  });

  it('gives a key made without scopes every scope', async () => {
    const { client } = await server.account('every-scope');
    const created = await client.POST('/spaces', { body: { name: 'All scopes', color: 2 } });
    expect(created.response.status).toBe(201);
    const listed = await client.GET('/domains', {});
    expect(listed.response.status).toBe(200);
  });
});
