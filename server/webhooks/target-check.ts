// The safe-target rule applied to a URL a client sends: its form (safe-target.ts), then every address its host
// resolves to. Used when an endpoint is saved; the delivery worker checks the address it connects to.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { unsafeAddressReason, urlProblem } from './safe-target.js';

const LOOKUP_TIMEOUT_MS = 5_000;

/** What is wrong with the URL as a webhook target, or undefined when it may be called. */
export async function targetProblem(value: string, allowPrivate: boolean): Promise<string | undefined> {
  const problem = urlProblem(value, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS);
      }),
    ]);
    for (const { address } of addresses) {
      const why = unsafeAddressReason(address);
      if (why) return `must not resolve to a ${why} address (${host} is ${address})`;
    }
    return undefined;
  } catch {
    return `must name a host that resolves (${host} did not)`;
  } finally {
    clearTimeout(timer);
  }
}
