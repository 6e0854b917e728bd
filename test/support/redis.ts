// The real Redis the rate-limit tests share counters in (DSS_TEST_REDIS_URL, default redis://127.0.0.1:6379).
// Without one (a contributor's laptop) those tests are skipped with a message; under CI they fail instead.
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';

export const REDIS_URL = process.env.DSS_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Whether something answers on the Redis port (a plain TCP connect, bounded). */
async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export const redisReachable = await reachable(REDIS_URL);
/** Skip the Redis tests: only outside CI, and only when Redis is not there. */
export const skipRedis = !redisReachable && !process.env.CI;

export function warnIfSkipped(file: string): void {
  if (skipRedis) console.warn(`${file}: skipped, no Redis at ${REDIS_URL} (start one, or set DSS_TEST_REDIS_URL).`);
}

/** A key prefix of its own, so that test runs in parallel (and repeated runs) never share a counter. */
export const uniquePrefix = () => `dss-test:${randomBytes(6).toString('hex')}:`;
