// TXT lookups through Node's dns Resolver against the configured servers (DNS_SERVERS), with its own timeout
// and tries. Nothing is cached here: every check asks the servers again, so a fixed record is seen at once.
import { Resolver } from 'node:dns/promises';
import type { LookupResult } from './check-rules.js';

export interface TxtLookupSettings {
  /** `host:port` or `host` (port 53) entries; the system's resolvers when empty. */
  servers: string[];
  /** The first try's timeout, in milliseconds (c-ares doubles it for later tries). */
  timeoutMs: number;
  /** Tries per server. */
  tries: number;
}

export const DEFAULT_TXT_LOOKUP: TxtLookupSettings = { servers: [], timeoutMs: 2000, tries: 2 };

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

export function txtLookup(settings: TxtLookupSettings): TxtLookup {
  const resolver = new Resolver({ timeout: settings.timeoutMs, tries: settings.tries });
  if (settings.servers.length > 0) resolver.setServers(settings.servers);
  const lookup = async (name: string): Promise<LookupResult> => {
    try {
      const records = await resolver.resolveTxt(name);
      return { values: records.map((strings) => strings.join('')) };
    } catch (error) {
      return { error: String((error as { code?: unknown }).code ?? 'EUNKNOWN') };
    }
  };
  return Object.assign(lookup, { close: () => resolver.cancel() });
}
