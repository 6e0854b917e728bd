// The safe-target rule applied to a URL a client sends: its form (safe-target.ts), then every address its host
// resolves to, judged by the same function the delivery worker applies to the address it connects to. The
// refusal states the rule, never what the name resolved to (that would tell any account the operator's DNS).
import { lookup } from 'node:dns/promises';
import { ADDRESS_RULE, isAddress, isSafeAddress, urlProblem } from './safe-target.js';

const LOOKUP_TIMEOUT_MS = 5_000;

/** What is wrong with the URL as a webhook target, or undefined when it may be called. */
export async function targetProblem(value: string, allowPrivate: boolean): Promise<string | undefined> {
  const problem = urlProblem(value, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(value).hostname.replace(/^\[|\]$/g, '');
  if (isAddress(host)) return undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      lookup(host, { all: true, verbatim: true }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), LOOKUP_TIMEOUT_MS);
      }),
    ]);
    if (addresses.every(({ address }) => isSafeAddress(address))) return undefined;
    return `must name a host whose every address is public: ${ADDRESS_RULE}`;
  } catch {
    return `must name a host that resolves (${host} did not)`;
  } finally {
    clearTimeout(timer);
  }
}
