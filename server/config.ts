// Configuration from the environment, checked as a whole: every problem is reported at once.
import { parseWorkers } from './cluster.js';
import { type DatabaseLimits, DEFAULT_DATABASE_LIMITS, DEFAULT_DATABASE_URL, parseDatabaseUrl } from './db/database.js';
import { type CheckSchedule, DEFAULT_SCHEDULE } from './domains/check-rules.js';
import { DEFAULT_VERIFY_QUOTA } from './domains/checks.js';
import { type RoutingTargets, readRoutingTargets } from './domains/routing-targets.js';
import { DEFAULT_TXT_LOOKUP, serversProblem, type TxtLookupSettings } from './domains/txt-lookup.js';
import { numberSetting } from './env-numbers.js';
import { type EventSettings, readEventSettings } from './events/settings.js';
import { defaultFirstKeyFile } from './first-key.js';
import { type CorsOrigins, parseCorsOrigins } from './http/access/cors.js';
import { parseQuota, parseTrustProxy, type TrustProxy } from './http/access/rate-limit.js';
import type { ConnectionLimits } from './lifecycle.js';
import { DEFAULT_LOG_BUFFER_BYTES, LOG_LEVELS, type LogLevel } from './logger.js';
import { parseMaxConnections } from './max-connections.js';
import type { Quota } from './quota.js';
import { readWebhookSettings, type WebhookSettings } from './webhooks/settings.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  /** Statement, lock and pool-wait limits of the database (server/db/database.ts), in milliseconds. */
  databaseLimits: DatabaseLimits;
  logLevel: LogLevel;
  /** Bytes of log lines held for a slow stdout reader before lines are dropped (server/logger.ts). */
  logBufferBytes: number;
  corsOrigins: CorsOrigins;
  /** Connection limits and the drain on SIGTERM/SIGINT (server/lifecycle.ts), in milliseconds. */
  limits: ConnectionLimits;
  /** Strict-Transport-Security max-age in seconds; 0 sends no HSTS header (server/http/pipeline/security-headers.ts). */
  hstsMaxAgeSeconds: number;
  /** Requests per API key and window; undefined when `off`. */
  rateLimit: Quota | undefined;
  /** Requests with a missing or wrong key per client address and window; undefined when `off`. */
  authFailureLimit: Quota | undefined;
  /** Where rate-limit counters are shared between processes; undefined: in each process's memory. */
  redisUrl: string | undefined;
  /** Prepended to the counters' keys in Redis, so that deployments can share one Redis. */
  redisPrefix: string;
  trustProxy: TrustProxy;
  /** Processes serving the port (server/cluster.ts). */
  workers: number;
  /** Where the first start writes the first API key when stdout is not a terminal. */
  firstKeyFile: string;
  /** firstKeyFile is FIRST_KEY_FILE's (not the default): a start that cannot write it fails, naming the setting. */
  firstKeyFileSet: boolean;
  /** A port of its own for GET /metrics (Prometheus); off when undefined. */
  metricsPort?: number;
  /** Serves GET /metrics on the service's port to this bearer token; off when undefined. */
  metricsToken?: string;
  /** The secret list cursors are sealed with; the database's own when undefined (server/http/conventions/cursor.ts). */
  cursorKey?: string;
  /** Webhook delivery: limits, retry schedule, safe targets, fairness (server/webhooks/settings.ts). */
  webhooks: WebhookSettings;
  /** The event log: its retention (server/events/settings.ts). */
  events: EventSettings;
  /** DNS servers, timeouts, check schedule and limits of domain verification (server/domains/). */
  domainVerification: DomainVerificationConfig;
}

export interface DomainVerificationConfig {
  lookup: TxtLookupSettings;
  schedule: CheckSchedule;
  /** Verifies per domain and window; undefined when `off`. */
  verifyQuota: Quota | undefined;
  /** Whether this process runs the scheduled checks (DOMAIN_CHECKS=on). */
  scheduler: boolean;
  /** DNS queries per second of the scheduled checks, per process. */
  queriesPerSecond: number;
  /** Where custom domains' traffic must go (DOMAIN_TARGET_CNAME, _A, _AAAA); routing is not checked when none. */
  targets: RoutingTargets;
}

export const DEFAULTS = {
  PORT: '3000',
  HOST: '127.0.0.1',
  DATABASE_URL: DEFAULT_DATABASE_URL,
  LOG_LEVEL: 'info',
  LOG_BUFFER_BYTES: String(DEFAULT_LOG_BUFFER_BYTES),
  CORS_ORIGINS: '*',
  HEADERS_TIMEOUT_S: '10',
  REQUEST_TIMEOUT_S: '30',
  IDLE_TIMEOUT_S: '5',
  // As HAProxy's `timeout client` in the recommended configuration, and nginx's send_timeout.
  SEND_TIMEOUT_S: '30',
  MAX_CONNECTIONS: 'auto',
  SHUTDOWN_GRACE_S: '10',
  // Covers HAProxy's default health checks (3 failures 2 s apart) and still leaves a drain within Docker's
  // default 10 s stop timeout.
  DRAIN_DELAY_S: '8',
  HSTS_MAX_AGE_S: '0',
  RATE_LIMIT: '600/60',
  AUTH_FAILURE_LIMIT: '20/60',
  REDIS_URL: '',
  REDIS_PREFIX: 'dss:rl:',
  TRUST_PROXY: 'off',
  WORKERS: '1',
  DATABASE_STATEMENT_TIMEOUT_S: String(DEFAULT_DATABASE_LIMITS.statementTimeoutMs / 1000),
  DATABASE_LOCK_TIMEOUT_S: String(DEFAULT_DATABASE_LIMITS.lockTimeoutMs / 1000),
  DATABASE_POOL_TIMEOUT_S: String(DEFAULT_DATABASE_LIMITS.poolTimeoutMs / 1000),
  DNS_SERVERS: '',
  DNS_TIMEOUT_S: String(DEFAULT_TXT_LOOKUP.timeoutMs / 1000),
  DNS_TRIES: String(DEFAULT_TXT_LOOKUP.tries),
  DOMAIN_CHECKS: 'on',
  DOMAIN_CHECK_QPS: '20',
  DOMAIN_ACTIVE_CHECK_S: String(DEFAULT_SCHEDULE.activeIntervalMs / 1000),
  DOMAIN_MISCONFIGURED_CHECK_S: String(DEFAULT_SCHEDULE.misconfiguredIntervalMs / 1000),
  DOMAIN_GRACE_S: String(DEFAULT_SCHEDULE.graceMs / 1000),
  DOMAIN_PENDING_EXPIRY_S: String(DEFAULT_SCHEDULE.pendingExpiryMs / 1000),
  DOMAIN_VERIFY_LIMIT: `${DEFAULT_VERIFY_QUOTA.limit}/${DEFAULT_VERIFY_QUOTA.windowSeconds}`,
  DOMAIN_TARGET_CNAME: '',
  DOMAIN_TARGET_A: '',
  DOMAIN_TARGET_AAAA: '',
} as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  const value = (name: keyof typeof DEFAULTS) => env[name] ?? DEFAULTS[name];
  const problems: string[] = [];

  const port = numberSetting('PORT', value('PORT'), { max: 65535, integer: true }, problems);
  const host = value('HOST');
  if (host.trim() === '') problems.push('HOST must not be empty');
  const databaseUrl = value('DATABASE_URL');
  const database = parseDatabaseUrl(databaseUrl);
  if ('error' in database) problems.push(database.error);
  const logLevel = value('LOG_LEVEL') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }

  const logBufferBytes = numberSetting(
    'LOG_BUFFER_BYTES',
    value('LOG_BUFFER_BYTES'),
    { min: 65_536, max: 1_073_741_824, integer: true, unit: 'bytes' },
    problems,
  );

  const corsOrigins = parseCorsOrigins(value('CORS_ORIGINS'));
  if (!Array.isArray(corsOrigins) && typeof corsOrigins === 'object') problems.push(corsOrigins.error);

  // Seconds, fractions allowed ("0.5"): limits are tuned in tests and by operators alike.
  const seconds = (name: keyof typeof DEFAULTS, { zero = false, max = 86_400 } = {}) =>
    numberSetting(name, value(name), { max, aboveMin: !zero, unit: 'seconds' }, problems);
  const maxConnections = () => {
    const parsed = parseMaxConnections(value('MAX_CONNECTIONS'));
    if (typeof parsed === 'object') problems.push(parsed.error);
    return typeof parsed === 'number' ? parsed : 0;
  };
  const limits: ConnectionLimits = {
    headersTimeoutMs: seconds('HEADERS_TIMEOUT_S') * 1000,
    requestTimeoutMs: seconds('REQUEST_TIMEOUT_S') * 1000,
    idleTimeoutMs: seconds('IDLE_TIMEOUT_S') * 1000,
    sendTimeoutMs: seconds('SEND_TIMEOUT_S') * 1000,
    maxConnections: maxConnections(),
    shutdownGraceMs: seconds('SHUTDOWN_GRACE_S') * 1000,
    drainDelayMs: seconds('DRAIN_DELAY_S', { zero: true, max: 600 }) * 1000,
  };
  // Node refuses a headers limit above the whole-request limit.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    problems.push('HEADERS_TIMEOUT_S must not be above REQUEST_TIMEOUT_S');
  }
  const hstsMaxAgeSeconds = seconds('HSTS_MAX_AGE_S', { zero: true, max: 63_072_000 });
  const databaseLimits: DatabaseLimits = {
    statementTimeoutMs: Math.round(seconds('DATABASE_STATEMENT_TIMEOUT_S', { max: 3600 }) * 1000),
    lockTimeoutMs: Math.round(seconds('DATABASE_LOCK_TIMEOUT_S', { max: 3600 }) * 1000),
    poolTimeoutMs: Math.round(seconds('DATABASE_POOL_TIMEOUT_S', { max: 3600 }) * 1000),
  };

  const quota = (name: 'RATE_LIMIT' | 'AUTH_FAILURE_LIMIT' | 'DOMAIN_VERIFY_LIMIT') => {
    const parsed = parseQuota(name, value(name));
    if (typeof parsed === 'object' && 'error' in parsed) problems.push(parsed.error);
    return typeof parsed === 'object' && 'limit' in parsed ? parsed : undefined;
  };
  const rateLimit = quota('RATE_LIMIT');
  const authFailureLimit = quota('AUTH_FAILURE_LIMIT');
  const redisUrl = value('REDIS_URL').trim() || undefined;
  if (redisUrl && !/^rediss?:\/\/./.test(redisUrl)) {
    problems.push(`REDIS_URL must be redis://host:port or rediss://host:port (got "${redisUrl}")`);
  }
  const trustProxy = parseTrustProxy(value('TRUST_PROXY'));
  if (typeof trustProxy === 'object' && 'error' in trustProxy) problems.push(trustProxy.error);

  const workers = parseWorkers(value('WORKERS'));
  if (typeof workers === 'object') problems.push(workers.error);

  const metricsPort = env.METRICS_PORT
    ? numberSetting('METRICS_PORT', env.METRICS_PORT, { max: 65535, integer: true }, problems)
    : undefined;
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && !/^[\x21-\x7e]{16,}$/.test(metricsToken)) {
    problems.push('METRICS_TOKEN must be at least 16 printable characters without spaces');
  }

  const cursorKey = env.CURSOR_KEY || undefined;
  if (cursorKey !== undefined && !/^[\x21-\x7e]{32,}$/.test(cursorKey)) {
    problems.push('CURSOR_KEY must be at least 32 printable characters without spaces (e.g. openssl rand -base64 32)');
  }
  const domainVerification = readDomainVerification(value, seconds, quota, problems);
  const webhooks = readWebhookSettings(env, problems);
  const events = readEventSettings(env, problems);

  if (problems.length > 0) throw new ConfigError(problems);
  const firstKeyFile = env.FIRST_KEY_FILE || defaultFirstKeyFile(databaseUrl);
  return {
    port,
    host,
    databaseUrl,
    databaseLimits,
    logLevel,
    logBufferBytes,
    corsOrigins: corsOrigins as CorsOrigins,
    limits,
    hstsMaxAgeSeconds,
    rateLimit,
    authFailureLimit,
    redisUrl,
    redisPrefix: value('REDIS_PREFIX'),
    trustProxy: trustProxy as TrustProxy,
    workers: workers as number,
    firstKeyFile,
    firstKeyFileSet: Boolean(env.FIRST_KEY_FILE),
    metricsPort,
    metricsToken,
    cursorKey,
    domainVerification,
    webhooks,
    events,
  };
}

/**
 * DNS_SERVERS, DNS_TIMEOUT_S, DNS_TRIES, DOMAIN_CHECKS, DOMAIN_CHECK_QPS, the schedule, DOMAIN_VERIFY_LIMIT and
 * the routing targets DOMAIN_TARGET_CNAME, DOMAIN_TARGET_A, DOMAIN_TARGET_AAAA.
 */
function readDomainVerification(
  value: (name: keyof typeof DEFAULTS) => string,
  seconds: (name: keyof typeof DEFAULTS, options?: { zero?: boolean; max?: number }) => number,
  quota: (name: 'DOMAIN_VERIFY_LIMIT') => Quota | undefined,
  problems: string[],
): DomainVerificationConfig {
  const servers = value('DNS_SERVERS')
    .split(',')
    .map((server) => server.trim())
    .filter((server) => server !== '');
  const serversError = servers.length > 0 ? serversProblem(servers) : undefined;
  if (serversError) {
    problems.push(
      `DNS_SERVERS must be a comma-separated list of host:port or host (got "${value('DNS_SERVERS')}": ${serversError})`,
    );
  }
  const tries = numberSetting('DNS_TRIES', value('DNS_TRIES'), { min: 1, max: 10, integer: true }, problems);
  const checks = value('DOMAIN_CHECKS');
  if (checks !== 'on' && checks !== 'off') problems.push(`DOMAIN_CHECKS must be on or off (got "${checks}")`);
  const qps = numberSetting(
    'DOMAIN_CHECK_QPS',
    value('DOMAIN_CHECK_QPS'),
    { min: 1, max: 10_000, integer: true },
    problems,
  );
  const year = 365 * 86_400;
  const ms = (name: keyof typeof DEFAULTS) => Math.round(seconds(name, { max: year }) * 1000);
  const schedule: CheckSchedule = {
    ...DEFAULT_SCHEDULE,
    activeIntervalMs: ms('DOMAIN_ACTIVE_CHECK_S'),
    misconfiguredIntervalMs: ms('DOMAIN_MISCONFIGURED_CHECK_S'),
    graceMs: ms('DOMAIN_GRACE_S'),
    pendingExpiryMs: ms('DOMAIN_PENDING_EXPIRY_S'),
  };
  // A failed lookup is retried no later than the state's own interval.
  schedule.retryMs = Math.min(DEFAULT_SCHEDULE.retryMs, schedule.activeIntervalMs, schedule.misconfiguredIntervalMs);
  const targets = readRoutingTargets(
    {
      DOMAIN_TARGET_CNAME: value('DOMAIN_TARGET_CNAME'),
      DOMAIN_TARGET_A: value('DOMAIN_TARGET_A'),
      DOMAIN_TARGET_AAAA: value('DOMAIN_TARGET_AAAA'),
    },
    problems,
  );
  return {
    lookup: { servers, timeoutMs: Math.round(seconds('DNS_TIMEOUT_S', { max: 60 }) * 1000), tries },
    schedule,
    verifyQuota: quota('DOMAIN_VERIFY_LIMIT'),
    scheduler: checks === 'on',
    queriesPerSecond: qps,
    targets,
  };
}

/**
 * The settings meant for development that are on: a start outside the sandbox warns of each in its start line
 * (private webhook targets, no per-key quota, no failed-authentication limit).
 */
export function developmentSettings(config: Pick<Config, 'webhooks' | 'rateLimit' | 'authFailureLimit'>): string[] {
  return [
    ...(config.webhooks.allowPrivateTargets ? ['WEBHOOK_ALLOW_PRIVATE_TARGETS=1'] : []),
    ...(config.rateLimit === undefined ? ['RATE_LIMIT=off'] : []),
    ...(config.authFailureLimit === undefined ? ['AUTH_FAILURE_LIMIT=off'] : []),
  ];
}
