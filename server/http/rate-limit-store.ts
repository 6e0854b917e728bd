// The Redis store of the rate limiter: rate-limit-redis's, with every command bounded in time and with its Lua
// scripts loaded again after a failed load (rate-limit-redis keeps a failed load for good, so a Redis that was
// slow or down for a moment would disable the limits until a restart).
import type { IncrementResponse, Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import { type RedisClient, sendCommandWithin } from '../redis.js';

// Loading a script happens once per store and may meet a busy Redis; counting happens on every request.
const SCRIPT_LOAD_TIMEOUT_MS = 5_000;

class ReloadingRedisStore extends RedisStore {
  override async increment(key: string): Promise<IncrementResponse> {
    try {
      return await super.increment(key);
    } catch (error) {
      this.incrementScriptSha = reloaded(this.incrementScriptSha, () => this.loadIncrementScript());
      throw error;
    }
  }

  override async get(key: string) {
    try {
      return await super.get(key);
    } catch (error) {
      this.getScriptSha = reloaded(this.getScriptSha, () => this.loadGetScript());
      throw error;
    }
  }
}

/** The same script id when it was loaded; a new load when loading failed. */
function reloaded(sha: Promise<string>, load: () => Promise<string>): Promise<string> {
  const next = sha.catch(load);
  // Awaited by the next request; until then, a failed load is no unhandled rejection.
  next.catch(() => {});
  return next;
}

export function redisStore(redis: RedisClient, prefix: string): Store {
  return new ReloadingRedisStore({
    prefix,
    sendCommand: (...args: string[]) =>
      sendCommandWithin(redis, args, args[0] === 'SCRIPT' ? SCRIPT_LOAD_TIMEOUT_MS : undefined),
  });
}
