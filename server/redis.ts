// The Redis connection that shares rate-limit counters between processes (REDIS_URL). A command never waits
// for a connection that is down: it fails at once, and so does one Redis does not answer in time, so that a
// Redis outage costs a request nothing but its limit (see http/access/rate-limit.ts).
import type { createClient } from 'redis';
import type { Logger } from './logger.js';

export type RedisClient = ReturnType<typeof createClient>;

const CONNECT_TIMEOUT_MS = 5_000;
/** How long a rate-limit command may take before the request goes on without it. */
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;

/**
 * Sends a command, rejecting after `timeoutMs`. node-redis's own timeout stops only at the write: a command
 * already sent waits for its reply forever. A reply that comes late is matched to its command and dropped.
 */
export function sendCommandWithin<Reply>(
  client: RedisClient,
  args: string[],
  timeoutMs = REDIS_COMMAND_TIMEOUT_MS,
): Promise<Reply> {
  const reply = client.sendCommand<Reply>(args);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    // Rejected only after the poll phase that follows the timer: when the event loop was busy for longer than
    // the timeout (a cold start), a reply already waiting in the socket still wins.
    timer = setTimeout(
      () => setImmediate(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`))),
      timeoutMs,
    );
  });
  // A late failure of a command given up on is nobody's concern.
  reply.catch(() => {});
  return Promise.race([reply, timeout]).finally(() => clearTimeout(timer));
}

/** Connects, or rejects within CONNECT_TIMEOUT_MS: a REDIS_URL that does not answer at start-up is a mistake to report. */
export async function connectRedis(url: string, logger: Logger): Promise<RedisClient> {
  let started = false;
  // Loaded only with a REDIS_URL: a start without one does not pay for it.
  const { createClient } = await import('redis');
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // At start-up a failure is final; after an outage, keep trying, at most every 5 s.
      reconnectStrategy: (retries, cause) => (started ? Math.min(100 * 2 ** retries, 5_000) : cause),
    },
  });
  let healthy = true;
  client.on('error', (error: unknown) => {
    // Once per outage, not once per reconnection attempt; a failure to start is reported by the caller.
    if (!healthy || !started) return;
    healthy = false;
    logger.warn('redis unavailable; rate limits are not enforced until it is back', {
      error: error instanceof Error ? error.message : String(error),
    });
  });
  client.on('ready', () => {
    if (healthy) return;
    healthy = true;
    logger.info('redis is back; rate limits are enforced again');
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
  });
  try {
    await Promise.race([client.connect(), timeout]);
    started = true;
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new Error(`REDIS_URL: cannot connect to Redis (${error instanceof Error ? error.message : String(error)})`);
  } finally {
    clearTimeout(timer);
  }
  return client;
}
