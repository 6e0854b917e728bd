// Rate-limit counters in a real Redis, reached through a proxy this test can freeze or cut: a Redis that stops
// answering or goes away costs a request its limit, never its answer (fail open, with one warning per outage),
// and the limits come back with Redis.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { Options } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../server/logger.js';
import { connectRedis, type RedisClient } from '../../server/redis.js';
import { startRedis } from '../deploy/redis-server.js';
import { policyItem } from '../support/rate-limit.js';
import { REDIS_URL, redisReachable, skipRedis, uniquePrefix, warnIfSkipped } from '../support/redis.js';
import { startServer, type TestAccount, type TestServer } from '../support/server.js';

warnIfSkipped('rate-limit-redis.test.ts');

/** A TCP proxy to Redis: `freeze` holds every byte both ways, `cut` drops the connections and refuses new ones. */
class RedisProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private frozen = false;
  port = 0;

  async listen(): Promise<void> {
    const { hostname, port } = new URL(REDIS_URL);
    const server = createServer((client) => {
      const upstream = createConnection(Number(port || 6379), hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        this.sockets.add(from);
        if (this.frozen) from.pause();
        from.pipe(to);
        from.on('error', () => to.destroy());
        from.on('close', () => {
          this.sockets.delete(from);
          to.destroy();
        });
      }
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as { port: number }).port;
  }

  freeze(frozen: boolean): void {
    this.frozen = frozen;
    for (const socket of this.sockets) frozen ? socket.pause() : socket.resume();
  }

  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

describe.skipIf(skipRedis)('counters in Redis', () => {
  const proxy = new RedisProxy();
  const logged: Array<{ level: string; msg: string }> = [];
  let redis: RedisClient;
  let server: TestServer;
  let alice: TestAccount;
  const QUOTA = 6;

  beforeAll(async () => {
    if (!redisReachable) throw new Error(`these tests need Redis at ${REDIS_URL} (CI must provide it)`);
    await proxy.listen();
    const logger = createLogger('info', (line) => logged.push(JSON.parse(line)));
    redis = await connectRedis(`redis://127.0.0.1:${proxy.port}`, logger);
    server = await startServer({
      rateLimit: { perKey: { limit: QUOTA, windowSeconds: 60 }, redis, redisPrefix: uniquePrefix() },
      logger,
    });
    alice = await server.account('alice');
  });
  afterAll(async () => {
    await server?.close();
    if (redis?.isOpen) await redis.close();
  });

  const list = () => server.fetch('/api/v1/spaces', { headers: { Authorization: `Bearer ${alice.key}` } });

  it('count in Redis, with the RateLimit fields', async () => {
    const first = await list();
    const second = await list();
    expect(second.status).toBe(200);
    const state = policyItem(second.headers.get('ratelimit'));
    expect(state).toMatchObject({ name: 'api-key' });
    if (first.headers.get('ratelimit')) expect(state.r).toBe(QUOTA - 2);
    // The first request of a cold app on a busy machine may outlast the command timeout and go unlimited
    // (counted in Redis or not, depending on whether its command was sent).
    else expect([QUOTA - 2, QUOTA - 1]).toContain(state.r);
  });

  it('let requests through without a limit while Redis does not answer, each within seconds', async () => {
    proxy.freeze(true);
    try {
      for (let request = 0; request < QUOTA + 2; request++) {
        const started = Date.now();
        const answer = await list();
        expect(answer.status).toBe(200);
        expect(answer.headers.get('ratelimit')).toBeNull();
        expect(Date.now() - started).toBeLessThan(5_000);
      }
    } finally {
      proxy.freeze(false);
    }
  });

  it('let requests through while Redis is gone, warn once, and limit again once it is back', async () => {
    await proxy.cut();
    for (let request = 0; request < QUOTA + 2; request++) {
      const started = Date.now();
      const answer = await list();
      expect(answer.status).toBe(200);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    const warnings = logged.filter((line) => line.level === 'warn' && line.msg.startsWith('redis unavailable'));
    expect(warnings).toHaveLength(1);

    await proxy.listen();
    const deadline = Date.now() + 20_000;
    while (!redis.isReady && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(redis.isReady).toBe(true);
    expect(logged.some((line) => line.level === 'info' && line.msg.startsWith('redis is back'))).toBe(true);
    let answer = await list();
    expect(answer.headers.get('ratelimit')).not.toBeNull();
    while (answer.status === 200) answer = await list();
    expect(answer.status).toBe(429);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

// A Redis of this test's own: it is told to forget its scripts, which no other test's counters should meet.
describe.skipIf(skipRedis)('the quota per key in Redis', () => {
  const QUOTA = 10;
  let own: Awaited<ReturnType<typeof startRedis>>;
  let redis: RedisClient;
  let server: TestServer;
  let alice: TestAccount;
  let previousRelease: RedisStore;
  let key: string;

  beforeAll(async () => {
    own = await startRedis();
    redis = await connectRedis(own.url, createLogger('silent'));
    const redisPrefix = uniquePrefix();
    server = await startServer({ rateLimit: { perKey: { limit: QUOTA, windowSeconds: 60 }, redis, redisPrefix } });
    alice = await server.account('alice');
    // The previous release counted the quota with rate-limit-redis's store, under the same keys.
    previousRelease = new RedisStore({
      prefix: `${redisPrefix}api-key:`,
      sendCommand: (...args: string[]) => redis.sendCommand(args),
    });
    await previousRelease.init({ windowMs: 60_000 } as Options);
    key = `key:${alice.key.split('_')[1]}`;
    // The app's first request (a cold start may outlast the command timeout, and then goes uncounted).
    await server.fetch('/api/v1/spaces', { headers: { Authorization: `Bearer ${alice.key}` } });
  });
  afterAll(async () => {
    await server?.close();
    if (redis?.isOpen) await redis.close();
    await own?.stop();
  });

  const remaining = async () => {
    const answer = await server.fetch('/api/v1/spaces', { headers: { Authorization: `Bearer ${alice.key}` } });
    expect(answer.status).toBe(200);
    return policyItem(answer.headers.get('ratelimit')).r;
  };

  it("shares each key's count with the previous release's counter during a rolling upgrade", async () => {
    const counted = (await previousRelease.get(key))?.totalHits ?? 0;
    await previousRelease.increment(key);
    await previousRelease.increment(key);
    expect(await remaining()).toBe(QUOTA - counted - 3);
    const previous = await previousRelease.increment(key);
    expect(previous.totalHits).toBe(counted + 4);
    expect(previous.resetTime?.getTime()).toBeGreaterThan(Date.now());
    expect(previous.resetTime?.getTime()).toBeLessThanOrEqual(Date.now() + 60_000);
    expect(await remaining()).toBe(QUOTA - counted - 5);
  });

  it('counts on after Redis forgot its scripts, as a restarted Redis has', async () => {
    const before = await remaining();
    await redis.sendCommand(['SCRIPT', 'FLUSH']);
    expect(await remaining()).toBe(Number(before) - 1);
    expect(await remaining()).toBe(Number(before) - 2);
  });
});

describe('a Redis connection', () => {
  it('is refused at start-up when nothing answers, naming REDIS_URL', async () => {
    await expect(connectRedis('redis://127.0.0.1:1', createLogger('silent'))).rejects.toThrow(
      /^REDIS_URL: cannot connect to Redis/,
    );
  });
});
