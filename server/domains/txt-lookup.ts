// TXT lookups through Node's dns Resolver against the configured servers (DNS_SERVERS), each bounded by its
// own time limit (DNS_TIMEOUT_S) whatever the tries (DNS_TRIES) and servers. Nothing is cached here: every
// check asks the servers again, so a fixed record is seen at once.
import { Resolver } from 'node:dns/promises';
import type { LookupResult } from './check-rules.js';

export interface TxtLookupSettings {
  /** `host:port` or `host` (port 53) entries; the system's resolvers when empty. */
  servers: string[];
  /** The most one lookup takes, every try and server included, in milliseconds (DNS_TIMEOUT_S). */
  timeoutMs: number;
  /** Tries per server within that time (DNS_TRIES). */
  tries: number;
}

export const DEFAULT_TXT_LOOKUP: TxtLookupSettings = { servers: [], timeoutMs: 2000, tries: 2 };

/**
 * The first try's timeout to give c-ares so that its tries fit in the lookup's time: c-ares doubles it for each
 * later try (and its adaptive timeouts differ between Node.js majors), so the lookup's own timer is the bound.
 */
function firstTryMs({ timeoutMs, tries }: Pick<TxtLookupSettings, 'timeoutMs' | 'tries'>): number {
  return Math.max(1, Math.floor(timeoutMs / (2 ** tries - 1)));
}

export type TxtLookup = ((name: string) => Promise<LookupResult>) & { close(): void };

/** The error of `setServers` for these servers, or undefined when they are usable. */
export function serversProblem(servers: string[]): string | undefined {
  try {
    new Resolver().setServers(servers);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** A resolver asking the configured servers, with tries that fit in one lookup's time (firstTryMs). */
export function configuredResolver(settings: TxtLookupSettings): Resolver {
  const resolver = new Resolver({ timeout: firstTryMs(settings), tries: settings.tries });
  if (settings.servers.length > 0) resolver.setServers(settings.servers);
  return resolver;
}

/** One query's answer as a LookupResult, or ETIMEOUT when it takes longer than `timeoutMs`. */
export async function bounded(query: Promise<string[]>, timeoutMs: number): Promise<LookupResult> {
  let timer: NodeJS.Timeout | undefined;
  // The query left behind by a timeout ends at c-ares's own time limit, which firstTryMs keeps near this one.
  const timedOut = new Promise<LookupResult>((resolve) => {
    timer = setTimeout(() => resolve({ error: 'ETIMEOUT' }), timeoutMs);
  });
  const answered = query.then(
    (values): LookupResult => ({ values }),
    (error: unknown): LookupResult => ({ error: String((error as { code?: unknown }).code ?? 'EUNKNOWN') }),
  );
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

export function txtLookup(settings: TxtLookupSettings): TxtLookup {
  const resolver = configuredResolver(settings);
  const lookup = (name: string): Promise<LookupResult> =>
    bounded(
      resolver.resolveTxt(name).then((records) => records.map((strings) => strings.join(''))),
      settings.timeoutMs,
    );
  return Object.assign(lookup, { close: () => resolver.cancel() });
}
