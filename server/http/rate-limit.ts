// Rate limits of /api/v1 with the IETF RateLimit fields (draft 8), counted in express-rate-limit's stores: a
// quota per API key (RATE_LIMIT), and a quota of failed authentications per client address (AUTH_FAILURE_LIMIT),
// the guard against guessing keys. Counters live in this process, or in Redis (REDIS_URL) to share them between
// processes.

import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ipKeyGenerator, MemoryStore, type Options, rateLimit, type Store } from 'express-rate-limit';
import type { Logger } from '../logger.js';
import type { RedisClient } from '../redis.js';
import { HttpProblem } from './problem.js';
import { redisStore } from './rate-limit-store.js';
import { context } from './request-context.js';

/** `limit` requests per `windowSeconds`, counted in fixed windows that start with the first request. */
export interface Quota {
  limit: number;
  windowSeconds: number;
}

export interface RateLimitSettings {
  /** Per API key; undefined: no limit. */
  perKey?: Quota;
  /** Requests answered 401, per client address; undefined: no guard. */
  authFailures?: Quota;
  /** Shared counters; without it, each process counts on its own. */
  redis?: RedisClient;
  /** Prefix of the counters' keys in Redis (default "dss:rl:"); tests give each run its own. */
  redisPrefix?: string;
}

export const PER_KEY_POLICY = 'api-key';
export const FAILED_AUTH_POLICY = 'failed-auth';

/**
 * The two steps around the key check: an error handler that counts each 401 against the client's address and
 * turns it into a 429 once the address is over its quota (a valid key is never refused for its address: clients
 * behind one NAT are not locked out by another's guesses), and the per-key limiter, after the key check.
 * Answers given before the key check (401, unknown path, 405) carry the address's failed-auth state.
 */
export function rateLimits(settings: RateLimitSettings = {}, logger: Logger): [ErrorRequestHandler, RequestHandler] {
  const store = (name: string): Store | undefined => {
    const { redis } = settings;
    if (!redis) return undefined;
    return redisStore(redis, `${settings.redisPrefix ?? 'dss:rl:'}${name}:`);
  };
  // A store that fails (Redis down or slow) lets the request through: an outage of the counters must not become
  // an outage of the API. Logged once per outage by the Redis client, and here at debug level.
  const common = {
    standardHeaders: 'draft-8' as const,
    legacyHeaders: false,
    passOnStoreError: true,
    logger: {
      warn: (error: unknown, message?: string) => logger.warn(message ?? 'rate limiter', { error: String(error) }),
      error: (error: unknown, message?: string) => logger.debug(message ?? 'rate limiter', { error: String(error) }),
    },
    // X-Forwarded-For is read only when TRUST_PROXY says so; a client sending it otherwise is no misconfiguration.
    // Each limiter counts a request once by construction (one step per policy), so the check that it did, a map
    // per request, is left out.
    validate: { xForwardedForHeader: false, singleCount: false },
  };

  const { perKey, authFailures } = settings;
  const perKeyLimiter: RequestHandler = perKey
    ? limitPerKey(perKey, store(PER_KEY_POLICY) ?? new MemoryStore(), logger)
    : (_req, _res, next) => next();

  if (!authFailures) return [(error, _req, _res, next) => next(error), perKeyLimiter];

  const guard = rateLimit({
    ...common,
    store: store(FAILED_AUTH_POLICY),
    limit: authFailures.limit,
    windowMs: authFailures.windowSeconds * 1000,
    identifier: FAILED_AUTH_POLICY,
    handler: (req, _res, next) => {
      next(
        new HttpProblem(
          429,
          'too-many-failed-authentications',
          `This address sent more than ${authFailures.limit} requests with a missing or wrong API key in ` +
            `${authFailures.windowSeconds} seconds; ${retryIn(req)}.`,
        ),
      );
    },
  });
  const failedAuthGuard: ErrorRequestHandler = (error, req, res, next) => {
    if (error instanceof HttpProblem && error.status === 401) {
      // Counted only here, once the key was refused.
      guard(req, res, (failure?: unknown) => next(failure ?? error));
      return;
    }
    showAddressState(guard.getKey, authFailures, req, res).then(
      () => next(error),
      () => next(error),
    );
  };
  return [failedAuthGuard, perKeyLimiter];
}

/**
 * The per-key quota on every request: express-rate-limit's store (in memory, or Redis) and its draft-8 fields,
 * without its per-request machinery (six awaits, a promise per answer, the key hashed for the policy field on
 * every request), which cost a tenth of a show request. A 304 is given back, as GitHub does: revalidating what
 * a client holds costs nothing. A store that fails lets the request through (see `common` above).
 */
function limitPerKey(quota: Quota, store: Store, logger: Logger): RequestHandler {
  const windowMs = quota.windowSeconds * 1000;
  store.init?.({ windowMs } as Options);
  const policies = new Map<string, string>();
  const policyOf = (key: string) => {
    let policy = policies.get(key);
    if (policy === undefined) {
      if (policies.size >= POLICY_CACHE_SIZE) policies.clear();
      policy = `"${PER_KEY_POLICY}"; q=${quota.limit}; w=${quota.windowSeconds}; pk=:${partitionKey(key)}:`;
      policies.set(key, policy);
    }
    return policy;
  };
  return async (_req, res, next) => {
    const key = `key:${keyId(res)}`;
    let hits: { totalHits: number; resetTime?: Date | undefined };
    try {
      hits = await store.increment(key);
    } catch (error) {
      logger.debug('rate limiter', { error: String(error) });
      return next();
    }
    const now = Date.now();
    const reset = hits.resetTime
      ? Math.max(0, Math.ceil((hits.resetTime.getTime() - now) / 1000))
      : quota.windowSeconds;
    res.append('RateLimit', `"${PER_KEY_POLICY}"; r=${Math.max(quota.limit - hits.totalHits, 0)}; t=${reset}`);
    res.append('RateLimit-Policy', policyOf(key));
    if (hits.totalHits > quota.limit) {
      res.setHeader('Retry-After', String(reset));
      throw new HttpProblem(
        429,
        'rate-limited',
        `This API key may send ${quota.limit} requests per ${quota.windowSeconds} seconds; retry in ${reset} seconds.`,
      );
    }
    res.once('finish', () => {
      if (res.statusCode === 304) Promise.resolve(store.decrement(key)).catch(() => {});
    });
    next();
  };
}

const POLICY_CACHE_SIZE = 10_000;

/** The draft-8 partition key of a quota's key, as express-rate-limit writes it (pk, in RateLimit-Policy). */
function partitionKey(key: string): string {
  return Buffer.from(createHash('sha256').update(key).digest('hex').slice(0, 12)).toString('base64');
}

/** The 12-hex-digit public id of the key that authenticated the request (`dss_<id>_<secret>`). */
function keyId(res: Response): string {
  const { account } = context(res);
  const header = res.req.get('authorization') ?? '';
  return /dss_([0-9a-f]{12})_/.exec(header)?.[1] ?? `account-${account?.id}`;
}

function retryIn(req: Request): string {
  const retryAfter = req.res?.get('Retry-After');
  return retryAfter ? `retry in ${retryAfter} seconds` : 'retry later';
}

/** An answer before the key check that counts nothing (unknown path, 405) still tells the address where it stands. */
async function showAddressState(
  getKey: (key: string) => Promise<{ totalHits: number; resetTime: Date | undefined } | undefined> | unknown,
  quota: Quota,
  req: Request,
  res: Response,
): Promise<void> {
  if (res.headersSent || res.get('RateLimit')) return;
  const address = ipKeyGenerator(req.ip ?? '');
  const info = (await getKey(address)) as { totalHits: number; resetTime?: Date } | undefined;
  const now = Date.now();
  const inWindow = info?.resetTime && info.resetTime.getTime() > now ? info : undefined;
  const remaining = Math.max(quota.limit - (inWindow?.totalHits ?? 0), 0);
  const reset = inWindow?.resetTime ? Math.ceil((inWindow.resetTime.getTime() - now) / 1000) : quota.windowSeconds;
  res.append('RateLimit', `"${FAILED_AUTH_POLICY}"; r=${remaining}; t=${reset}`);
  res.append('RateLimit-Policy', `"${FAILED_AUTH_POLICY}"; q=${quota.limit}; w=${quota.windowSeconds}`);
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
