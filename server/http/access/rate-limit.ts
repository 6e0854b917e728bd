// Rate limits of /api/v1, with the IETF RateLimit fields (draft 8): a quota per API key (RATE_LIMIT), and a quota
// of failed authentications per client address (AUTH_FAILURE_LIMIT), the guard against guessing keys. The guard is
// express-rate-limit used as documented. The per-key quota, which every request passes, is counted by our own
// code (its counters, fields and refusal, the whole step): the library's middleware cost 4 to 7 % of a show's
// instructions (five awaits and a SHA-256 on each request; npm run bench:instructions). Counters live in this process, in Redis
// (REDIS_URL; the guard through rate-limit-redis's RedisStore, the quota in the same kind of key) to share them
// between processes, or with WORKERS > 1 and no Redis in the primary process (server/cluster-counters.ts).

import { createHash, hash } from 'node:crypto';
import { isIP } from 'node:net';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { type Options, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from '../../logger.js';
import { type Quota, Windows } from '../../quota.js';
import { type RedisClient, sendCommandWithin } from '../../redis.js';
import { HttpProblem } from '../problems/problem.js';
import { context } from '../routing/request-context.js';

export interface RateLimitSettings {
  /** Per API key; undefined: no limit. */
  perKey?: Quota;
  /** Requests answered 401, per client address; undefined: no guard. */
  authFailures?: Quota;
  /** Shared counters; without it, each process counts on its own (or as `sharedStore` says). */
  redis?: RedisClient;
  /** Without Redis, the counters named `name` (the workers' shared ones); default: in this process. */
  sharedStore?: (name: string) => SharedStore;
  /** Prefix of the counters' keys in Redis (default "dss:rl:"); tests give each run its own. */
  redisPrefix?: string;
}

/** Counters kept elsewhere: a store the guard's limiter drives, which also counts the quota's hits. */
export interface SharedStore extends Store {
  /** The window and limit of the quota counted through `increment` without a limiter. */
  configure(windowMs: number, limit: number): void;
}

export const PER_KEY_POLICY = 'api-key';
export const FAILED_AUTH_POLICY = 'failed-auth';

/**
 * The two steps around the key check: the failed-authentication guard, an error handler that runs its limiter
 * on every answer given before a key was accepted (401, unknown path, 405: each carries the address's state),
 * keeps only the 401s counted, and turns a 401 into a 429 once the address is over its quota (a valid key is
 * never refused for its address: clients behind one NAT are not locked out by another's guesses); and the
 * per-key limiter after the key check, where every request counts, whatever its answer (a 304 too: it read the
 * database like any show).
 */
export function rateLimits(settings: RateLimitSettings = {}, logger: Logger): [ErrorRequestHandler, RequestHandler] {
  const { perKey, authFailures, redis } = settings;
  const prefix = (name: string) => `${settings.redisPrefix ?? 'dss:rl:'}${name}:`;

  const perKeyLimiter: RequestHandler = perKey
    ? quotaPerKey(perKey, quotaCounter(perKey, settings, prefix(PER_KEY_POLICY)), logger)
    : (_req, _res, next) => next();

  if (!authFailures) return [(error, _req, _res, next) => next(error), perKeyLimiter];

  const guard = rateLimit({
    store: redis ? redisStore(redis, prefix(FAILED_AUTH_POLICY)) : settings.sharedStore?.(`${FAILED_AUTH_POLICY}:`),
    limit: authFailures.limit,
    windowMs: authFailures.windowSeconds * 1000,
    identifier: FAILED_AUTH_POLICY,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    // A store that fails (Redis down or slow) lets the request through: an outage of the counters must not become
    // an outage of the API. Logged once per outage by the Redis client, and here at debug level.
    passOnStoreError: true,
    logger: {
      warn: (error: unknown, message?: string) => logger.warn(message ?? 'rate limiter', { error: String(error) }),
      error: (error: unknown, message?: string) => logger.debug(message ?? 'rate limiter', { error: String(error) }),
    },
    // X-Forwarded-For is read only when TRUST_PROXY says so; a client sending it otherwise is no misconfiguration.
    validate: { xForwardedForHeader: false },
    // Every answer before the key check shows the address's state; only a missing or wrong key (401, or the
    // 429 that replaced one) stays counted.
    skipSuccessfulRequests: true,
    requestWasSuccessful: (_req, res) => res.statusCode !== 401 && res.statusCode !== 429,
    handler: (req, _res, next) => {
      next(
        new HttpProblem(
          'too-many-failed-authentications',
          `This address reached its failed-authentication limit: more than ${authFailures.limit} requests with a ` +
            `missing or wrong API key in ${authFailures.windowSeconds} seconds; ${retryIn(req)}. This is not an API ` +
            "key's quota: requests with a valid key are still served.",
        ),
      );
    },
  } satisfies Partial<Options>);
  const failedAuthGuard: ErrorRequestHandler = (error, req, res, next) => {
    // A request whose key was accepted is past the guard's concern, whatever went wrong after.
    if (!(error instanceof HttpProblem) || res.headersSent || context(res).account) return next(error);
    // Only a 401 may become a 429: an unknown path or a 405 keeps its answer (the request may carry a valid key).
    const refusable = error.status === 401;
    guard(req, res, (failure?: unknown) => {
      if (!refusable) res.removeHeader('Retry-After');
      next(failure && refusable ? failure : error);
    });
  };
  return [failedAuthGuard, perKeyLimiter];
}

/** A key's hits in its current fixed window, this one included, and when the window ends (ms since the epoch). */
interface Hits {
  total: number;
  resetAt: number;
}

/** Counts one more hit of a key; a promise where the count is kept outside this process. */
type Counter = (key: string) => Hits | Promise<Hits>;

/**
 * The quota per key, as express-rate-limit's middleware would keep it with `standardHeaders: 'draft-8'`: every
 * request whose key was accepted counts, its answer carries `RateLimit` (what is left, seconds to the window's
 * end) and `RateLimit-Policy` (the quota, the window, the key's partition), and one over the quota is a 429 with
 * Retry-After. A count that fails (Redis down or slow) lets the request through without the fields: an outage of
 * the counters must not become an outage of the API (logged once per outage by the Redis client, here at debug).
 */
function quotaPerKey(quota: Quota, count: Counter, logger: Logger): RequestHandler {
  const policy = `"${PER_KEY_POLICY}"; q=${quota.limit}; w=${quota.windowSeconds}; pk=:`;
  const decide = (res: Response, next: (error?: unknown) => void, key: string, hits: Hits) => {
    const resetSeconds = Math.max(0, Math.ceil((hits.resetAt - Date.now()) / 1000));
    if (!res.headersSent) {
      res.setHeader('RateLimit', `"${PER_KEY_POLICY}"; r=${Math.max(quota.limit - hits.total, 0)}; t=${resetSeconds}`);
      res.setHeader('RateLimit-Policy', `${policy}${partitionKey(key)}:`);
    }
    if (hits.total <= quota.limit) return next();
    if (!res.headersSent) res.setHeader('Retry-After', String(resetSeconds));
    next(
      new HttpProblem(
        'rate-limited',
        `This API key may send ${quota.limit} requests per ${quota.windowSeconds} seconds; retry in ${resetSeconds} seconds.`,
      ),
    );
  };
  const passOn = (next: () => void) => (error: unknown) => {
    logger.debug('rate limit not counted: the request goes on without it', { error: String(error) });
    next();
  };
  return (_req, res, next) => {
    // Placed after the key check; a request it did not accept never gets here, and is not counted if it does.
    const account = context(res).account;
    if (account === undefined) return next();
    const key = quotaKey(account);
    let hits: Hits | Promise<Hits>;
    try {
      hits = count(key);
    } catch (error) {
      return passOn(next)(error);
    }
    // What fails after the count (a step below) goes to the error handlers, as from express-rate-limit's wrapper.
    if (hits instanceof Promise) hits.then((counted) => decide(res, next, key, counted), passOn(next)).catch(next);
    else decide(res, next, key, hits);
  };
}

/**
 * The partition key of RateLimit-Policy (`pk`), as express-rate-limit writes it: the first 12 hex digits of the
 * counter key's SHA-256, in base64, so that a client tells its keys' quotas apart without learning the key.
 */
function partitionKey(key: string): string {
  return Buffer.from(hash('sha256', key, 'hex').slice(0, 12)).toString('base64');
}

/** Where the quota's hits are counted: in Redis, in the workers' primary, or in this process. */
function quotaCounter(quota: Quota, settings: RateLimitSettings, redisPrefix: string): Counter {
  const windowMs = quota.windowSeconds * 1000;
  if (settings.redis) return redisCounter(settings.redis, redisPrefix, windowMs);
  const shared = settings.sharedStore?.(`${PER_KEY_POLICY}:`);
  if (shared) {
    shared.configure(windowMs, quota.limit);
    return async (key) => {
      const { totalHits, resetTime } = await shared.increment(key);
      return { total: totalHits, resetAt: resetTime?.getTime() ?? Date.now() + windowMs };
    };
  }
  return memoryCounter(windowMs);
}

/** Fixed windows per key in this process; windows that have ended are forgotten once per window. */
function memoryCounter(windowMs: number): Counter {
  const windows = new Windows();
  let pruneAt = Date.now() + windowMs;
  return (key) => {
    const now = Date.now();
    if (now >= pruneAt) {
      windows.prune(now);
      pruneAt = now + windowMs;
    }
    const { totalHits, resetAt = now + windowMs } = windows.apply('increment', key, windowMs, now);
    return { total: totalHits, resetAt };
  };
}

/** The counter of the key that authenticated the request: its public id, or its account where keys have none. */
function quotaKey(account: { id: number; keyId?: string }): string {
  return account.keyId ? `key:${account.keyId}` : `account:${account.id}`;
}

function retryIn(req: Request): string {
  const retryAfter = req.res?.get('Retry-After');
  return retryAfter ? `retry in ${retryAfter} seconds` : 'retry later';
}

// Loading a script happens once per store and may meet a busy Redis; counting happens on every request.
const SCRIPT_LOAD_TIMEOUT_MS = 5_000;

/**
 * One more hit in Redis: the key's count, created with the window as its expiry by its first hit. The same keys
 * and counts as rate-limit-redis's increment (a number, expiring with the window), so that during a rolling
 * upgrade the processes of the previous release, which count through it, share each quota with these.
 */
const INCREMENT = [
  'local ttl = redis.call("PTTL", KEYS[1])',
  'if ttl <= 0 then',
  '  redis.call("SET", KEYS[1], 1, "PX", ARGV[1])',
  '  return { 1, tonumber(ARGV[1]) }',
  'end',
  'return { redis.call("INCR", KEYS[1]), ttl }',
].join('\n');
const INCREMENT_SHA1 = createHash('sha1').update(INCREMENT).digest('hex');

function redisCounter(redis: RedisClient, prefix: string, windowMs: number): Counter {
  const window = String(windowMs);
  const evaluate = (key: string) =>
    sendCommandWithin<[number, number]>(redis, ['EVALSHA', INCREMENT_SHA1, '1', `${prefix}${key}`, window]);
  return async (key) => {
    let reply: [number, number];
    try {
      reply = await evaluate(key);
    } catch (error) {
      // Redis forgets its scripts when it restarts: loaded again, once, by the request that finds it missing.
      if (!/^NOSCRIPT/.test((error as Error | null)?.message ?? '')) throw error;
      await sendCommandWithin(redis, ['SCRIPT', 'LOAD', INCREMENT], SCRIPT_LOAD_TIMEOUT_MS);
      reply = await evaluate(key);
    }
    return { total: Number(reply[0]), resetAt: Date.now() + Number(reply[1]) };
  };
}

/**
 * rate-limit-redis's store, constructed as its README shows, every command bounded in time. A `SCRIPT LOAD` that
 * fails answers the script's SHA-1 (the name Redis gives it), because the store keeps a failed load for good: the
 * next EVALSHA then meets NOSCRIPT, and the store loads the script again itself once Redis is back.
 */
function redisStore(redis: RedisClient, prefix: string): Store {
  return new RedisStore({
    prefix,
    sendCommand: async (...args: string[]) => {
      if (args[0] !== 'SCRIPT' || args[1] !== 'LOAD') return sendCommandWithin(redis, args);
      try {
        return await sendCommandWithin(redis, args, SCRIPT_LOAD_TIMEOUT_MS);
      } catch {
        return createHash('sha1')
          .update(args[2] ?? '')
          .digest('hex');
      }
    },
  });
}

/** Reads `RATE_LIMIT`-style values: `<requests>/<seconds>`, or `off`. */
export function parseQuota(name: string, value: string): Quota | 'off' | { error: string } {
  const trimmed = value.trim();
  if (trimmed === 'off') return 'off';
  const match = /^(\d{1,9})\/(\d{1,7})$/.exec(trimmed);
  const limit = Number(match?.[1]);
  const windowSeconds = Number(match?.[2]);
  if (!match || limit < 1 || windowSeconds < 1) {
    return {
      error: `${name} must be <requests>/<seconds> with both at least 1, such as 600/60, or off (got "${value}")`,
    };
  }
  return { limit, windowSeconds };
}

/** Express's `trust proxy`: false, a number of proxy hops, or the proxies' addresses and subnets. */
export type TrustProxy = false | number | string[];

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * Reads `TRUST_PROXY`: `off`, a hop count, or a comma-separated list of addresses, subnets (CIDR) and Express's
 * names `loopback`, `linklocal`, `uniquelocal`. Never "trust everything": any client could then pick its own
 * address in X-Forwarded-For and escape the per-address limit.
 */
export function parseTrustProxy(value: string): TrustProxy | { error: string } {
  const trimmed = value.trim();
  if (trimmed === 'off' || trimmed === 'false' || trimmed === '') return false;
  if (/^\d{1,2}$/.test(trimmed)) return Number(trimmed);
  const entries = trimmed.split(',').map((entry) => entry.trim());
  const bad = entries.filter((entry) => !PROXY_NAMES.includes(entry) && !isAddressOrSubnet(entry));
  if (bad.length > 0 || trimmed === 'true') {
    return {
      error:
        'TRUST_PROXY must be off, a number of proxy hops, or proxy addresses and subnets such as ' +
        `10.0.0.0/8,loopback (got "${value}")`,
    };
  }
  return entries;
}

function isAddressOrSubnet(entry: string): boolean {
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}
