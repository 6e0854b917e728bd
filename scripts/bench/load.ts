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
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  requests: number;
  /** Responses that were not 2xx, plus connection errors and timeouts: any of them voids the measurement. */
  failures: number;
}

export function measure(request: LoadRequest): Promise<Measurement> {
  const args = [autocannon, '--json', '-c', String(request.connections), '-d', String(request.duration)];
  args.push('-m', request.method);
  for (const [name, value] of Object.entries(request.headers)) args.push('-H', `${name}=${value}`);
  if (request.body !== undefined) args.push('-b', request.body);
  args.push(request.url);
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
