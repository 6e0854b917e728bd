// The scope matrix, generated from the spec: every operation (and HEAD beside each GET), sent with a key of each
// single scope, is refused with 403 naming its declared scopes by every key that does not cover them, and not
// refused for scope by a key that does (a write scope covers its read scope: key-policy.ts holdsScope).
// Operations added to the spec later are walked without a change here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holdsScope, SCOPES } from '../../server/accounts/key-policy.js';
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

/** The scopes of a key that holds these, as the service reads them: each write scope covers its read scope. */
const covers = (held: readonly string[], declared: readonly string[]) =>
  declared.every((scope) => holdsScope(new Set(held), scope));

describe('scopes declared by the spec', () => {
  it('declares known scopes on every operation, at most one of each resource', () => {
    for (const operation of spec.model.operations) {
      // The calling key's own record is any valid key's to read (Cloudflare's token verify), and the event types
      // (no account data) any key's.
      if (['api-keys_current', 'api-keys_current_head', 'event-types_list'].includes(operation.id)) {
        expect(operation.scopes, operation.id).toEqual([]);
        continue;
      }
      expect(operation.scopes.length, operation.id).toBeGreaterThanOrEqual(1);
      for (const scope of operation.scopes) expect(SCOPES, operation.id).toContain(scope);
      // The bundle's description says it (spec/lint/scope-notes.js): the docs page and the client's types show it.
      expect((operation.object as { description: string }).description, operation.id).toContain(
        `**Scope:** ${operation.scopes.map((scope) => `\`${scope}\``).join(' and ')}`,
      );
    }
  });

  it('makes a write scope cover its read scope, and nothing else', () => {
    expect(covers(['spaces:write'], ['spaces:read'])).toBe(true);
    expect(covers(['spaces:read'], ['spaces:write'])).toBe(false);
    expect(covers(['domains:write'], ['spaces:read'])).toBe(false);
    expect(covers(['webhooks:write'], ['events:read'])).toBe(false);
  });

  it.each(requests)('$id: refused without $scopes, served with them', async ({ method, path, scopes }) => {
    const declared = scopes.join(', ');
    // Every single-scope key, and the key holding exactly the declared scopes.
    const holders: string[][] = [...SCOPES.map((scope) => [scope])];
    if (scopes.length > 1) holders.push([...scopes]);
    for (const held of holders) {
      const key =
        held.length === 1
          ? (keys.get(held[0] as string) as string)
          : (await issueKey(server.db, 'matrix', { scopes: held })).key;
      const response = await send(method, path, key);
      if (covers(held, scopes)) {
        expect(response.status, `${method} ${path} with ${held}`).not.toBe(403);
        await response.arrayBuffer();
        continue;
      }
      expect(response.status, `${method} ${path} with ${held}`).toBe(403);
      expect(response.headers.get('x-accepted-scopes')).toBe(declared);
      if (method === 'HEAD') continue;
      const problem = await expectProblem(response, 403);
      expect(problem.type).toBe('/problems/insufficient-scope');
      for (const scope of scopes.filter((s) => !covers(held, [s]))) expect(problem.detail).toContain(scope);
      expect(problem.detail).toContain(`Its scopes: ${held.join(', ')}.`);
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
