// `npm run bench:auth-timing`: does a key's public id show in the time authentication takes? Starts the service
// (`npm start`, a fresh SQLite file, limits off) on 127.0.0.1, then sends interleaved pairs of requests whose keys
// are both wrong: one with the public id of a real key (and a wrong secret), one with an unknown id. Between the
// pairs the real key is used, so that the service's key cache is warm for it. Prints the median of each kind and
// their difference; it should be within the noise (under 3%).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnChild, stopAllChildren, waitForHttp } from './children.js';

const PAIRS = Number(process.env.PAIRS ?? 1000);
const WARMUP = 200;

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One GET over a kept-alive connection; resolves with its status and the time to the end of the answer in µs. */
function timed(port: number, key: string): Promise<{ status: number; micros: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = request(
      { host: '127.0.0.1', port, path: '/api/v1/spaces/1', agent, headers: { Authorization: `Bearer ${key}` } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, micros: Number(process.hrtime.bigint() - started) / 1000 }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};
const trimmedMean = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const kept = sorted.slice(Math.floor(sorted.length * 0.1), Math.ceil(sorted.length * 0.9));
  return kept.reduce((sum, value) => sum + value, 0) / kept.length;
};

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dss-auth-timing-'));
  try {
    const port = await freePort();
    const keyFile = join(dir, 'first-api-key');
    spawnChild(process.execPath, ['scripts/start.mjs'], {
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}`,
      FIRST_KEY_FILE: keyFile,
      RATE_LIMIT: 'off',
      AUTH_FAILURE_LIMIT: 'off',
      LOG_LEVEL: 'silent',
      DSS_BUILD_DOCS: '0',
    });
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, performance.now(), 200);
    const valid = readFileSync(keyFile, 'utf8').trim();
    const publicId = /^dss_([0-9a-f]{12})_/.exec(valid)?.[1];
    if (!publicId) throw new Error(`no key in ${keyFile}`);
    const wrongSecret = () => `dss_${publicId}_${randomBytes(32).toString('base64url')}`;
    const unknownId = () => {
      let id = randomBytes(6).toString('hex');
      while (id === publicId) id = randomBytes(6).toString('hex');
      return `dss_${id}_${randomBytes(32).toString('base64url')}`;
    };

    const known: number[] = [];
    const unknown: number[] = [];
    for (let pair = 0; pair < WARMUP + PAIRS; pair++) {
      // The real key first, so that a cache keyed by the public id would be warm for the known id.
      if ((await timed(port, valid)).status === 401) throw new Error('the real key was refused');
      const order = pair % 2 === 0 ? ([true, false] as const) : ([false, true] as const);
      for (const isKnown of order) {
        const { status, micros } = await timed(port, isKnown ? wrongSecret() : unknownId());
        if (status !== 401) throw new Error(`a wrong key answered ${status}`);
        if (pair >= WARMUP) (isKnown ? known : unknown).push(micros);
      }
    }
    const row = (name: string, values: number[]) =>
      `${name.padEnd(28)} median ${median(values).toFixed(0).padStart(5)} µs   trimmed mean ${trimmedMean(values).toFixed(0).padStart(5)} µs`;
    console.log(`${PAIRS} interleaved pairs of wrong keys (GET /api/v1/spaces/1, 401), after ${WARMUP} to warm up:`);
    console.log(row('known id, wrong secret', known));
    console.log(row('unknown id', unknown));
    const difference = (median(known) - median(unknown)) / median(unknown);
    const meanDifference = (trimmedMean(known) - trimmedMean(unknown)) / trimmedMean(unknown);
    console.log(
      `difference: ${(difference * 100).toFixed(1)}% (medians), ${(meanDifference * 100).toFixed(1)}% (trimmed means)`,
    );
  } finally {
    agent.destroy();
    await stopAllChildren();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
