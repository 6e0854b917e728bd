// One delivery attempt over HTTP: POST the payload with its signed headers, within a time limit that covers
// connecting, the answer's headers and its body, and only to an address the safe-target rule allows (checked
// on the address actually connected to, so a DNS answer that changed since the endpoint was saved is caught).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { ADDRESS_RULE, isSafeAddress, urlProblem } from './safe-target.js';

/** The first characters of an answer's body kept in the delivery log. */
export const RESPONSE_BODY_KEPT = 1024;
/** Read no more of an answer's body than this: the rest is not needed, and not waited for. */
const RESPONSE_BODY_READ = 64 * 1024;

export interface AttemptResult {
  /** The answer's status; undefined when none came (timeout, refused, unsafe). */
  status?: number;
  retryAfter?: string;
  body?: string;
  error?: string;
  latencyMs: number;
}

class UnsafeTarget extends Error {}

/** What the delivery log says of any connection that failed before an answer came. */
export const CONNECTION_FAILED = 'connection failed: no answer from the target';

/** dns.lookup, refusing every address the safe-target rule does not allow. */
const safeLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 4);
    if (!addresses.every((a) => isSafeAddress(a.address))) {
      return callback(new UnsafeTarget(`${hostname} resolves to an address refused: ${ADDRESS_RULE}`), '', 4);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

export function sendAttempt(
  url: string,
  body: string,
  headers: Record<string, string>,
  { timeoutMs, allowPrivate }: { timeoutMs: number; allowPrivate: boolean },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const problem = urlProblem(url, allowPrivate);
  if (problem) return Promise.resolve({ error: `unsafe target: the URL ${problem}`, latencyMs: 0 });
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: elapsed() });
    };
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      headers: {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'domain-space-service-webhooks/1',
      },
      ...(allowPrivate ? {} : { lookup: safeLookup }),
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ error: `timeout: no complete answer within ${timeoutMs} ms` });
    }, timeoutMs);
    // Any failed connection is one kind (refused, reset, TLS, unreachable alike): the log cannot map ports.
    request.on('error', (error) => {
      finish({ error: error instanceof UnsafeTarget ? `unsafe target: ${error.message}` : CONNECTION_FAILED });
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      let read = 0;
      const status = response.statusCode ?? 0;
      // HTTP's statuses are 100-599 (RFC 9110 §15): anything else is a broken answer, not a status.
      if (status < 100 || status > 599) {
        response.destroy();
        return finish({ error: `invalid answer: status ${status} is outside 100-599` });
      }
      const done = () => {
        const text = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_KEPT);
        const retryAfter = response.headers['retry-after'];
        finish({
          status,
          body: text,
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        });
      };
      response.on('data', (chunk: Buffer) => {
        if (read < RESPONSE_BODY_KEPT * 4) chunks.push(chunk);
        read += chunk.length;
        if (read > RESPONSE_BODY_READ) {
          done();
          response.destroy();
        }
      });
      response.on('end', done);
      response.on('error', (error) => finish({ status, error: error.message.slice(0, 500) }));
    });
    request.end(body);
  });
}
