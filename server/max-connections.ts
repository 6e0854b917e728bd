// MAX_CONNECTIONS: how many client connections one process holds at once. Its default keeps file descriptors
// for the database, the log and new clients: the process's descriptor limit less a reserve. At the limit, a new
// connection takes the place of one whose answer is stalled (its client reads nothing) or of an idle keep-alive
// one; with neither, it is closed at once (server/lifecycle.ts).
import { readFileSync } from 'node:fs';

/** When the descriptor limit cannot be read (not Linux): Node's own default, none, would risk EMFILE. */
const WITHOUT_KNOWN_LIMIT = 4_000;
const MIN_RESERVE = 64;

/** The soft limit on open files (`ulimit -n`) from /proc/self/limits; undefined where there is none to read. */
export function openFilesLimit(limits = '/proc/self/limits'): number | undefined {
  try {
    const line = /^Max open files\s+(\S+)/m.exec(readFileSync(limits, 'utf8'))?.[1];
    if (line === 'unlimited') return Number.MAX_SAFE_INTEGER;
    return line && /^\d+$/.test(line) ? Number(line) : undefined;
  } catch {
    return undefined;
  }
}

/** `auto`'s value: the descriptor limit less a tenth of it (at least 64) for everything that is not a client. */
export function defaultMaxConnections(fileLimit: number | undefined): number {
  if (fileLimit === undefined) return WITHOUT_KNOWN_LIMIT;
  return Math.max(1, Math.min(1_000_000, fileLimit - Math.max(MIN_RESERVE, Math.floor(fileLimit / 10))));
}

/** MAX_CONNECTIONS as a number: `auto`, or an integer from 1 to 1,000,000. */
export function parseMaxConnections(value: string): number | { error: string } {
  if (value === 'auto') return defaultMaxConnections(openFilesLimit());
  if (/^\d{1,7}$/.test(value) && Number(value) >= 1 && Number(value) <= 1_000_000) return Number(value);
  return { error: `MAX_CONNECTIONS must be "auto" or an integer from 1 to 1000000 (got "${value}")` };
}
