// The public endpoints outside /api/v1 (the spec as JSON and YAML, health and readiness) answer without a key.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { RESOURCE_NAMES } from '../../server/resources.js';
import { startServer, type TestServer } from '../support/server.js';
import { allOperations } from '../support/spec-operations.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

// A collection and an item path per resource, and the other paths of the spec (actions on a record, webhook endpoints, events).
const API_PATHS = [
  ...new Set([
    ...RESOURCE_NAMES.flatMap((name) => [`/${name}`, `/${name}/{id}`]),
    ...allOperations.map((operation) => operation.template),
  ]),
].sort();

describe('/openapi.json', () => {
  it('serves the OpenAPI 3.1 document as JSON with a collection and an item path per resource', async () => {
    const response = await server.fetch('/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const document = JSON.parse(await response.text()) as {
      openapi: string;
      paths: Record<string, unknown>;
      servers: Array<{ url: string }>;
    };
    expect(document.openapi).toMatch(/^3\.1\.\d+$/);
    expect(Object.keys(document.paths).sort()).toEqual(API_PATHS);
    // This deployment's origin (test/docs/host-independence.test.ts covers other hosts).
    expect(document.servers[0]?.url).toBe(`${server.origin}/api/v1`);
  });
});

describe('/openapi.yaml', () => {
  it('serves the same document as YAML', async () => {
    const yamlResponse = await server.fetch('/openapi.yaml');
    expect(yamlResponse.status).toBe(200);
    expect(yamlResponse.headers.get('content-type')).toMatch(/yaml/);
    const fromYaml = parse(await yamlResponse.text());
    const fromJson = await (await server.fetch('/openapi.json')).json();
    expect(fromYaml).toEqual(fromJson);
    expect(Object.keys(fromYaml.paths).sort()).toEqual(API_PATHS);
  });
});

describe.each([
  { path: '/healthz', status: 'ok' },
  { path: '/readyz', status: 'ready' },
])('$path', ({ path, status }) => {
  it('answers 200 without a key', async () => {
    const response = await server.fetch(path);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toMatchObject({ status });
  });
});

describe('/healthz', () => {
  it('says which release answers: the version of package.json and a commit', async () => {
    const body = await (await server.fetch('/healthz')).json();
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    expect(body).toEqual({ status: 'ok', version, commit: expect.stringMatching(/^([0-9a-f]{40}|unknown)$/) });
  });
});

describe('/readyz without a database', () => {
  it('answers 503 problem+json once the database is gone', async () => {
    const broken = await startServer();
    try {
      await broken.db.destroy();
      const response = await fetch(`${broken.origin}/readyz`);
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({ status: 503 });
      expect((await fetch(`${broken.origin}/healthz`)).status).toBe(200);
    } finally {
      await broken.close();
    }
  });
});

describe('public endpoints and credentials', () => {
  it.each(['/openapi.json', '/openapi.yaml', '/healthz', '/readyz'])(
    '%s ignores a bad Authorization header',
    async (path) => {
      const response = await server.fetch(path, { headers: { Authorization: 'Bearer not-a-key' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('www-authenticate')).toBeNull();
    },
  );
});
