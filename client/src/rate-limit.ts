// The rate-limit state of the latest answer, read from the IETF RateLimit and RateLimit-Policy fields (draft 8):
// `RateLimit: "api-key"; r=599; t=60` and `RateLimit-Policy: "api-key"; q=600; w=60`.

export interface RateLimitState {
  /** The policy's name: `api-key` for a key's quota, `failed-auth` for an address's failed authentications. */
  policy: string;
  /** Requests allowed per window (`q`), when the answer said. */
  limit: number | undefined;
  /** Requests left in the current window (`r`). */
  remaining: number;
  /** Seconds until the window ends, as of the answer (`t`). */
  resetSeconds: number;
  /** The window's length in seconds (`w`), when the answer said. */
  windowSeconds: number | undefined;
  /** When the window ends, by this machine's clock. */
  resetAt: Date;
}

/** One member of a RateLimit or RateLimit-Policy list: the policy's name and its parameters as sent. */
export interface RateLimitItem {
  name: string;
  parameters: Map<string, string>;
}

/**
 * Items of a structured-field list such as `"a"; r=1; t=2, "b"; r=3; t=4` (strings, tokens and their
 * parameters); undefined when the field does not parse as one. The one reader of these fields: the conformance
 * runner and the tests read them with it too.
 */
export function parseRateLimitItems(field: string): RateLimitItem[] | undefined {
  const found: RateLimitItem[] = [];
  for (const member of field.match(/(?:"(?:[^"\\]|\\.)*"|[^,])+/g) ?? []) {
    const [head = '', ...parameters] = member.split(';').map((part) => part.trim());
    const name = /^"((?:[^"\\]|\\.)*)"$/.exec(head)?.[1] ?? (/^[A-Za-z*][\w:.*/-]*$/.test(head) ? head : undefined);
    if (name === undefined) return undefined;
    const map = new Map<string, string>();
    for (const parameter of parameters) {
      const match = /^([a-z*][a-z0-9_.*-]*)=(.+)$/.exec(parameter);
      if (!match) return undefined;
      map.set(match[1] as string, match[2] as string);
    }
    found.push({ name, parameters: map });
  }
  return found.length > 0 ? found : undefined;
}

/** A structured-field parameter that is a non-negative integer, as a number. */
export const rateLimitInteger = (value: string | undefined) =>
  value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;

/** The most constraining policy of the answer (the fewest requests left), or undefined when it names none. */
export function readRateLimit(headers: Headers, now = Date.now()): RateLimitState | undefined {
  const policies = parseRateLimitItems(headers.get('RateLimit-Policy') ?? '') ?? [];
  let tightest: RateLimitState | undefined;
  for (const { name, parameters } of parseRateLimitItems(headers.get('RateLimit') ?? '') ?? []) {
    const remaining = rateLimitInteger(parameters.get('r'));
    if (remaining === undefined) continue;
    const resetSeconds = rateLimitInteger(parameters.get('t')) ?? 0;
    const policy = policies.find((each) => each.name === name)?.parameters;
    const state: RateLimitState = {
      policy: name,
      limit: rateLimitInteger(policy?.get('q')),
      remaining,
      resetSeconds,
      windowSeconds: rateLimitInteger(policy?.get('w')),
      resetAt: new Date(now + resetSeconds * 1000),
    };
    if (!tightest || state.remaining < tightest.remaining) tightest = state;
  }
  return tightest;
}
