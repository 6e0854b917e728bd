// Rate-limit counters shared by the workers of one primary (WORKERS > 1 without REDIS_URL): each worker's limiter
// uses a store (express-rate-limit's documented Store interface) that asks the primary over the cluster's IPC
// channel, and the primary keeps one fixed window per key, as the limiter's own MemoryStore does. Without it,
// every worker would count on its own, and each quota would be multiplied by the number of workers.
import cluster from 'node:cluster';
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';

const REQUEST = 'dss:counters';
const REPLY = 'dss:counters:reply';
/** A primary that does not answer in this time fails the count; the limiter then lets the request through. */
const REPLY_TIMEOUT_MS = 2_000;

type Operation = 'get' | 'increment' | 'decrement' | 'reset';

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

/** One fixed window per key: its hits, and when it ends. */
export class Windows {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();

  apply(
    operation: Operation,
    key: string,
    windowMs: number,
    now = Date.now(),
  ): { totalHits: number; resetAt?: number } {
    let window = this.windows.get(key);
    if (window && window.resetAt <= now) {
      this.windows.delete(key);
      window = undefined;
    }
    if (operation === 'reset') {
      this.windows.delete(key);
      return { totalHits: 0 };
    }
    if (operation === 'increment') {
      window ??= { hits: 0, resetAt: now + windowMs };
      window.hits++;
      this.windows.set(key, window);
    } else if (operation === 'decrement' && window && window.hits > 0) {
      window.hits--;
    }
    return window ? { totalHits: window.hits, resetAt: window.resetAt } : { totalHits: 0 };
  }

  /** Forgets the windows that have ended, so that memory follows the keys seen in one window. */
  prune(now = Date.now()): void {
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  get size(): number {
    return this.windows.size;
  }
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

const infoOf = (reply: CounterReply): ClientRateLimitInfo => ({
  totalHits: reply.totalHits,
  resetTime: reply.resetAt === undefined ? undefined : new Date(reply.resetAt),
});

/** In a worker: a limiter's store whose counts the primary keeps, shared with the other workers. */
export class PrimaryCounterStore implements Store {
  private windowMs = 60_000;

  constructor(readonly prefix: string) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  async get(key: string): Promise<ClientRateLimitInfo> {
    return infoOf(await ask('get', this.prefix + key, this.windowMs));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return infoOf(await ask('increment', this.prefix + key, this.windowMs));
  }

  async decrement(key: string): Promise<void> {
    await ask('decrement', this.prefix + key, this.windowMs);
  }

  async resetKey(key: string): Promise<void> {
    await ask('reset', this.prefix + key, this.windowMs);
  }
}
