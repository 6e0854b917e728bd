// What a client's forged forwarding headers can do through the recommended HAProxy configuration
// (scripts/deploy/haproxy.cfg) to a service that trusts it (TRUST_PROXY=1): its X-Forwarded-Host never reaches
// the served spec's server URL, and the request log records the client's address as HAProxy forwarded it
// (req.ip), not only HAProxy's own address and the raw X-Forwarded-For the client began.
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/bench/children.js';
import { createLogger } from '../../server/logger.js';
import { startServer, type TestServer } from '../support/server.js';
import { ensureHaproxy, type Haproxy, startHaproxy } from './haproxy.js';

const haproxyHere = ensureHaproxy();
if (!haproxyHere && !process.env.CI) console.warn('haproxy-headers.test.ts: skipped, HAProxy could not be installed.');

/** The client connects from an address of its own, so that its address and HAProxy's differ in the log. */
const CLIENT_ADDRESS = '127.0.0.2';
const lines: string[] = [];
let work: string;
let server: TestServer;
let haproxy: Haproxy;

beforeAll(async () => {
  if (!haproxyHere && !process.env.CI) return;
  if (!haproxyHere) throw new Error('HAProxy is missing and could not be installed (apt-get install haproxy)');
  work = mkdtempSync(join(tmpdir(), 'dss-haproxy-headers-'));
  server = await startServer({ trustProxy: 1, logger: createLogger('info', (line) => lines.push(line)) });
  const topology = {
    bind: await freePort(),
    stats: await freePort(),
    servers: { dss1: Number(new URL(server.origin).port) },
    retries: false,
  };
  haproxy = startHaproxy(topology, join(work, 'haproxy.cfg'));
  await haproxy.waitFor('dss1', 'UP');
});
afterAll(async () => {
  await haproxy?.stop();
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** A GET through HAProxy from CLIENT_ADDRESS with these headers: status and body. */
function throughHaproxy(path: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: haproxy.port, localAddress: CLIENT_ADDRESS, path, headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => {
          body += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.once('error', reject).end();
  });
}

describe.runIf(haproxyHere || process.env.CI)('forwarding headers through the recommended HAProxy', () => {
  it('serves the spec for the Host asked for, whatever X-Forwarded-Host the client sends', async () => {
    const { status, body } = await throughHaproxy('/openapi.yaml', {
      Host: 'api.example',
      'X-Forwarded-Host': 'evil.example',
    });
    expect(status).toBe(200);
    expect(body).toContain('\n  - url: http://api.example/api/v1\n');
    expect(body).not.toContain('evil.example');
  });

  it("logs the client's address as TRUST_PROXY computes it beside HAProxy's and the raw X-Forwarded-For", async () => {
    const id = `xff-${Date.now()}`;
    // Not a health check, whose passing answers are logged at debug only.
    await throughHaproxy('/openapi.json', { 'X-Forwarded-For': '203.0.113.9', 'X-Request-Id': id });
    // The line is written once the answer is handed to the socket, before HAProxy passes it on: it is there.
    const line = lines.map((text) => JSON.parse(text)).find((entry) => entry.request_id === id);
    expect(line?.req).toMatchObject({ remoteAddress: '127.0.0.1', clientAddress: CLIENT_ADDRESS });
    expect(line?.req.headers['x-forwarded-for']).toBe(`203.0.113.9, ${CLIENT_ADDRESS}`);
  });
});
