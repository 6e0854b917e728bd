// One measurement: autocannon in its own process (so the load generator does not share the target's event
// loop), with its JSON result reduced to what the report needs.
import { fileURLToPath } from 'node:url';
import { spawnChild } from './children.js';

const autocannon = fileURLToPath(new URL('../../node_modules/autocannon/autocannon.js', import.meta.url));

export interface LoadRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
  connections: number;
  duration: number;
  /**
   * For requests that each need a record of their own (a delete): `{id}` in the URL's path becomes `firstId`,
   * then the next id, request by request (load-ids.mjs).
   */
  firstId?: number;
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses that were not 2xx, plus connection errors and timeouts: any of them voids the measurement. */
  failures: number;
}

const byIds = fileURLToPath(new URL('./load-ids.mjs', import.meta.url));

/** autocannon's command line for `request` (its CLI), or load-ids.mjs's for requests that each take an id. */
function commandOf(request: LoadRequest): string[] {
  if (request.firstId !== undefined) {
    const url = new URL(request.url.replace('{id}', '0'));
    const { connections, duration, method, headers, firstId } = request;
    const pathTemplate = new URL(request.url.replace('{id}', 'ID')).pathname.replace('ID', '{id}');
    return [
      byIds,
      JSON.stringify({ origin: url.origin, pathTemplate, method, headers, connections, duration, firstId }),
    ];
  }
  const args = [autocannon, '--json', '-c', String(request.connections), '-d', String(request.duration)];
  args.push('-m', request.method);
  for (const [name, value] of Object.entries(request.headers)) args.push('-H', `${name}=${value}`);
  if (request.body !== undefined) args.push('-b', request.body);
  args.push(request.url);
  return args;
}

export function measure(request: LoadRequest): Promise<Measurement> {
  const args = commandOf(request);
  return new Promise((resolve, reject) => {
    const child = spawnChild(process.execPath, args, {}, true);
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`autocannon exited with ${code}: ${stderr}`));
      try {
        const result = JSON.parse(stdout);
        resolve({
          requestsPerSecond: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          requests: result.requests.total,
          failures: result.non2xx + result.errors + result.timeouts,
        });
      } catch (error) {
        reject(new Error(`autocannon printed no JSON result: ${String(error)}\n${stdout}\n${stderr}`));
      }
    });
  });
}
