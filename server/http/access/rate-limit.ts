// Rate limits of /api/v1, both express-rate-limit used as documented, with its IETF RateLimit fields (draft 8):
// a quota per API key (RATE_LIMIT), and a quota of failed authentications per client address
// (AUTH_FAILURE_LIMIT), the guard against guessing keys. Counters live in the limiter's MemoryStore, in Redis
// (REDIS_URL, rate-limit-redis's RedisStore) to share them between processes, or with WORKERS > 1 and no Redis
// in the primary process (server/cluster-counters.ts).

import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { type Options, rateLimit, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from '../../logger.js';
import type { Quota } from '../../quota.js';
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
  /** Without Redis, the store of the counters named `name` (the workers' shared one); default: in this process. */
  sharedStore?: (name: string) => Store;
  /** Prefix of the counters' keys in Redis (default "dss:rl:"); tests give each run its own. */
  redisPrefix?: string;
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
  const store = (name: string): Store | undefined =>
    redis ? redisStore(redis, `${settings.redisPrefix ?? 'dss:rl:'}${name}:`) : settings.sharedStore?.(`${name}:`);
  // A store that fails (Redis down or slow) lets the request through: an outage of the counters must not become
  // an outage of the API. Logged once per outage by the Redis client, and here at debug level.
  const common = {
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    passOnStoreError: true,
    logger: {
      warn: (error: unknown, message?: string) => logger.warn(message ?? 'rate limiter', { error: String(error) }),
      error: (error: unknown, message?: string) => logger.debug(message ?? 'rate limiter', { error: String(error) }),
    },
    // X-Forwarded-For is read only when TRUST_PROXY says so; a client sending it otherwise is no misconfiguration.
    validate: { xForwardedForHeader: false },
  } satisfies Partial<Options>;

  const perKeyLimiter: RequestHandler = perKey
    ? rateLimit({
        ...common,
        store: store(PER_KEY_POLICY),
        limit: perKey.limit,
        windowMs: perKey.windowSeconds * 1000,
        identifier: PER_KEY_POLICY,
        // Placed after the key check; a request it did not accept never gets here, and is not counted if it does.
        skip: (_req, res) => context(res).account === undefined,
        keyGenerator: (_req, res) => quotaKey(context(res).account),
        handler: (req, _res, next) => {
          next(
            new HttpProblem(
              'rate-limited',
              `This API key may send ${perKey.limit} requests per ${perKey.windowSeconds} seconds; ${retryIn(req)}.`,
            ),
          );
        },
      })
    : (_req, _res, next) => next();

  if (!authFailures) return [(error, _req, _res, next) => next(error), perKeyLimiter];

  const guard = rateLimit({
    ...common,
    store: store(FAILED_AUTH_POLICY),
    limit: authFailures.limit,
    windowMs: authFailures.windowSeconds * 1000,
    identifier: FAILED_AUTH_POLICY,
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
  });
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

/** The counter of the key that authenticated the request: its public id, or its account where keys have none. */
function quotaKey(account: { id: number; keyId?: string } | undefined): string {
  return account?.keyId ? `key:${account.keyId}` : `account:${account?.id}`;
}

function retryIn(req: Request): string {
  const retryAfter = req.res?.get('Retry-After');
  return retryAfter ? `retry in ${retryAfter} seconds` : 'retry later';
}

// Loading a script happens once per store and may meet a busy Redis; counting happens on every request.
const SCRIPT_LOAD_TIMEOUT_MS = 5_000;

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
