// Rate-limit counters shared by the workers of one primary (WORKERS > 1 without REDIS_URL): each worker's limits
// count through a store (express-rate-limit's documented Store interface, whose `increment` the per-key quota's
// own code calls too) that asks the primary over the cluster's IPC channel, and the primary keeps one fixed window
// per key, as the limiter's own MemoryStore does. Without it, every worker would count on its own, and each quota
// would be multiplied by the number of workers.
//
// Why not @express-rate-limit/cluster-memory-store (0.3.1, by express-rate-limit's maintainers), which does the
// same over the same channel: its primary answers each count with the MemoryStore's live record, serialised only
// after an `await`, so the counts that arrive in one read of the channel are all answered with the last one.
// Measured, one worker sending 40 counts of one key at once against a quota of 30: it served 0, 30, 17, 0 and 0 in
// five runs (three times every answer said 40), where this store serves 30 with each count said once
// (test/service/workers.test.ts holds it to that). It also prints a stack trace to stderr for each answer that
// comes after its fixed 1 s timeout. Speed decides nothing: a limited list with WORKERS=2 (npm run bench, 16
// connections, load 11-16 on 2 cores) ran 2244 req/s with this store (3 rounds), 2147 and 2002 with the library
// (3 and 5 rounds), 1392 and 1863 with this store and the fall-back below (3 and 5 rounds; its own count costs
// about 0.3 µs a request), the rounds of one run spreading from 532 to 2938.
//
// A primary that does not answer in time (stalled, stopped): the limiter would let every request through
// (passOnStoreError) with no limit at all. Instead each worker also counts every request in fixed windows of its
// own, and while the primary is silent it decides by that count with the quota divided among the workers (its
// share, rounded up; fallbackHits): a key stays bounded by about its quota, whichever workers its requests reach.
// The fall-back is logged once per outage, and its end; one request every PROBE_EVERY_MS asks the primary again
// while the others do not wait on it. Measured with the primary stopped (SIGSTOP), 60 requests of one key at once
// on a quota of 30: before, all 60 served, each after 2 s; now 24 to 30 served, the first burst after 2 s, the
// next ones without waiting; the shared count back within seconds of SIGCONT.
import cluster from 'node:cluster';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { Logger } from './logger.js';
import { type Operation, Windows } from './quota.js';

const REQUEST = 'dss:counters';
const REPLY = 'dss:counters:reply';
/** A primary that does not answer in this time fails the count; the worker then counts its share on its own. */
const REPLY_TIMEOUT_MS = 2_000;
/** While the primary is silent, how often one request asks it again (waiting at most REPLY_TIMEOUT_MS). */
const PROBE_EVERY_MS = 2_000;

interface CounterRequest {
  type: typeof REQUEST;
  id: number;
  operation: Operation;
  key: string;
  windowMs: number;
}

interface CounterReply {
  type: typeof REPLY;
  id: number;
  totalHits: number;
  /** Milliseconds since the epoch; absent for a key with no hits. */
  resetAt?: number;
}

/** In the primary: answers the workers' counter requests until the returned function is called. */
export function serveCounters(): () => void {
  const windows = new Windows();
  const onMessage = (worker: { send(message: CounterReply): boolean }, message: unknown) => {
    const request = message as Partial<CounterRequest> | null;
    if (request?.type !== REQUEST || typeof request.key !== 'string' || typeof request.id !== 'number') return;
    const { totalHits, resetAt } = windows.apply(
      request.operation ?? 'get',
      request.key,
      Number(request.windowMs) || 60_000,
    );
    worker.send({ type: REPLY, id: request.id, totalHits, ...(resetAt === undefined ? {} : { resetAt }) });
  };
  cluster.on('message', onMessage);
  const pruning = setInterval(() => windows.prune(), 60_000).unref();
  return () => {
    cluster.off('message', onMessage);
    clearInterval(pruning);
  };
}

let nextId = 0;
const pending = new Map<number, (reply: CounterReply) => void>();
let listening = false;

function ask(operation: Operation, key: string, windowMs: number): Promise<CounterReply> {
  if (!listening) {
    listening = true;
    process.on('message', (message: Partial<CounterReply> | null) => {
      if (message?.type !== REPLY || typeof message.id !== 'number') return;
      pending.get(message.id)?.(message as CounterReply);
    });
  }
  const id = ++nextId;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      pending.delete(id);
      reject(new Error('the primary did not answer a rate-limit count in time'));
    }, REPLY_TIMEOUT_MS);
    pending.set(id, (reply) => {
      clearTimeout(timer);
      pending.delete(id);
      resolve(reply);
    });
    const request: CounterRequest = { type: REQUEST, id, operation, key, windowMs };
    if (!process.send?.(request)) {
      clearTimeout(timer);
      pending.delete(id);
      reject(new Error('no channel to the primary'));
    }
  });
}

const infoOf = (reply: { totalHits: number; resetAt?: number }): ClientRateLimitInfo => ({
  totalHits: reply.totalHits,
  resetTime: reply.resetAt === undefined ? undefined : new Date(reply.resetAt),
});

/**
 * The hits a worker's own count stands for while the primary is silent: the limiter refuses above `limit`, so
 * `own` hits up to the worker's share, ceil(limit / workers), map to at most `limit`, and one more to above it.
 */
export function fallbackHits(own: number, limit: number, workers: number): number {
  const share = Math.ceil(limit / workers);
  return Math.ceil((own * limit) / share);
}

/**
 * In a worker: a limiter's store whose counts the primary keeps, shared with the other workers; while the primary
 * is silent, this worker's own count against its share of the quota.
 */
export class PrimaryCounterStore implements Store {
  private windowMs = 60_000;
  private limit: number | undefined;
  private readonly own = new Windows();
  private pruneAt = 0;
  private silentSince: number | undefined;
  private nextProbe = 0;
  private probing = false;

  constructor(
    readonly prefix: string,
    private readonly workers: number,
    private readonly logger: Logger,
  ) {}

  init(options: Options): void {
    this.configure(options.windowMs, typeof options.limit === 'number' ? options.limit : undefined);
  }

  configure(windowMs: number, limit: number | undefined): void {
    this.windowMs = windowMs;
    this.limit = limit;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const shared = await this.fromPrimary('get', key);
    if (shared) return shared;
    const own = this.counted('get', key);
    return own.resetAt === undefined ? undefined : infoOf(own);
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    // This worker's own count, taken now, before other requests count.
    const own = this.counted('increment', key);
    const shared = await this.fromPrimary('increment', key);
    if (shared) return shared;
    const totalHits =
      this.limit === undefined ? own.totalHits * this.workers : fallbackHits(own.totalHits, this.limit, this.workers);
    return { totalHits, resetTime: own.resetAt === undefined ? undefined : new Date(own.resetAt) };
  }

  async decrement(key: string): Promise<void> {
    this.counted('decrement', key);
    await this.fromPrimary('decrement', key);
  }

  async resetKey(key: string): Promise<void> {
    this.counted('reset', key);
    await this.fromPrimary('reset', key);
  }

  /** This worker's own window of `key`, after `operation`; ended windows are forgotten once per window. */
  private counted(operation: Operation, key: string): { totalHits: number; resetAt?: number } {
    const now = Date.now();
    if (now >= this.pruneAt) {
      this.own.prune(now);
      this.pruneAt = now + this.windowMs;
    }
    return this.own.apply(operation, key, this.windowMs, now);
  }

  /** The primary's count, or undefined while it is silent (then one request per PROBE_EVERY_MS waits on it). */
  private async fromPrimary(operation: Operation, key: string): Promise<ClientRateLimitInfo | undefined> {
    const silent = this.silentSince !== undefined;
    if (silent && (this.probing || Date.now() < this.nextProbe)) return undefined;
    if (silent) this.probing = true;
    try {
      const reply = await ask(operation, this.prefix + key, this.windowMs);
      if (this.silentSince !== undefined) {
        this.logger.info('the primary counts rate limits again', {
          limiter: this.prefix,
          silent_ms: Date.now() - this.silentSince,
        });
        this.silentSince = undefined;
      }
      return infoOf(reply);
    } catch (error) {
      if (this.silentSince === undefined) {
        this.silentSince = Date.now();
        this.logger.warn(
          `the primary did not answer a rate-limit count; each worker counts on its own, with 1/${this.workers} of each quota, until it does`,
          { limiter: this.prefix, error: String(error) },
        );
      }
      this.nextProbe = Date.now() + PROBE_EVERY_MS;
      return undefined;
    } finally {
      if (silent) this.probing = false;
    }
  }
}
