// /docs is the same bytes whatever the Host (the page takes the origin from the browser); /openapi.json and
// /openapi.yaml name the origin they are served from, joined into a document split once. Either way no request
// makes the service build or keep anything per Host. And a problem's `type` URI, opened, leads to its entry.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { documentedProblemKinds } from '../../server/http/problems/problem-types.js';
import { spec } from '../support/contract.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

const run = promisify(execFile);
const SAMPLE_ORIGIN = 'http://127.0.0.1:3000';
const dir = mkdtempSync(join(tmpdir(), 'dss-origin-'));
const page = join(dir, 'index.html');
// A stand-in for the built page: the spec's relative server and a sample, as the page embeds them.
const PAGE = `<!DOCTYPE html><html><body><script type="application/json" id="dss-spec">{"servers":[{"url":"/api/v1"}],"x":"curl -s ${SAMPLE_ORIGIN}/api/v1/domains"}</script></body></html>`;

let server: TestServer;
let account: TestAccount;

beforeAll(async () => {
  writeFileSync(page, PAGE);
  server = await startServer({ docsFile: page });
  account = await server.account('origin');
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** GET with a Host header of our choosing (fetch does not send one it is given). */
function get(path: string, host?: string, headers: Record<string, string> = {}) {
  const { port } = new URL(server.origin);
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }>(
    (resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path, headers: { ...(host ? { Host: host } : {}), ...headers } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
        },
      );
      req.on('error', reject);
      req.end();
    },
  );
}

type Document = { servers: Array<{ url: string }>; paths: Record<string, Record<string, unknown>> };

describe('/openapi.json and /openapi.yaml', () => {
  it.each([
    ['/openapi.json', (text: string) => JSON.parse(text) as Document],
    ['/openapi.yaml', (text: string) => parse(text) as Document],
  ])('%s names the origin it is served from as its server and in every sample', async (path, read) => {
    const answer = await get(path, 'api.example.test:8443');
    expect(answer.status).toBe(200);
    expect(answer.headers.vary).toMatch(/\bHost\b/);
    const document = read(answer.text);
    expect(document.servers[0]?.url).toBe('http://api.example.test:8443/api/v1');
    expect(answer.text).not.toContain(SAMPLE_ORIGIN);
    const samples = JSON.stringify(document.paths);
    expect(samples).toContain('curl -s http://api.example.test:8443/api/v1/domains');
    expect(samples).toContain("baseUrl: 'http://api.example.test:8443/api/v1'");
  });

  it.each(['json', 'yaml'] as const)('the %s document differs between two Hosts in the origin only', async (format) => {
    const [one, two] = await Promise.all([get(`/openapi.${format}`, 'a.test'), get(`/openapi.${format}`, 'bb.test')]);
    expect(one.text.replaceAll('http://a.test', 'ORIGIN')).toBe(two.text.replaceAll('http://bb.test', 'ORIGIN'));
  });

  it('serves the document as written to a Host that is not a plain host name', async () => {
    const answer = await get('/openapi.json', 'bad"host<x>');
    const document = JSON.parse(answer.text) as Document;
    expect(document.servers[0]?.url).toBe('/api/v1');
    expect(answer.text).toBe(spec.json);
  });

  it('has a curl sample that works when pasted, unchanged', async () => {
    const document = (await (await server.fetch('/openapi.json')).json()) as Document;
    const list = document.paths['/domains']?.get as { 'x-codeSamples': Array<{ lang: string; source: string }> };
    const curl = list['x-codeSamples'].find((sample) => sample.lang === 'Shell')?.source ?? '';
    expect(curl).toContain(`${server.origin}/api/v1/domains`);
    const { stdout } = await run('bash', ['-c', curl], { env: { ...process.env, DSS_API_KEY: account.key } });
    expect(JSON.parse(stdout)).toMatchObject({ data: [], meta: { total: 0 } });
  });
});

describe('/docs', () => {
  it('is the same page, with the same ETag, for every Host', async () => {
    const hosts = ['docs.example.test', 'one.example.test:8080', '[::1]:3000', undefined];
    const answers = await Promise.all(hosts.map((host) => get('/docs', host, { 'Accept-Encoding': 'identity' })));
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.text).toBe(PAGE);
      expect(answer.headers.etag).toBe(answers[0]?.headers.etag);
      expect(answer.headers.vary).toBe('Accept-Encoding');
    }
    const again = await get('/docs', 'three.example.test', { 'If-None-Match': answers[0]?.headers.etag as string });
    expect(again.status).toBe(304);
  });
});

describe('problem type URIs', () => {
  it.each([...documentedProblemKinds(spec)])('/problems/%s leads to its entry in /docs', async (kind) => {
    const answer = await get(`/problems/${kind}`);
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`/docs#problem-${kind}`);
  });

  it('answers 404 for a kind the docs do not list', async () => {
    const answer = await get('/problems/no-such-kind');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.text)).toMatchObject({ type: '/problems/not-found', status: 404 });
  });
});
