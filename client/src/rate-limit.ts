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

type Item = { name: string; parameters: Map<string, string> };

/** Items of a structured-field list such as `"a"; r=1; t=2, "b"; r=3; t=4` (strings and integers only). */
function items(field: string | null): Item[] {
  if (!field) return [];
  const found: Item[] = [];
  for (const member of field.match(/(?:"(?:[^"\\]|\\.)*"|[^,])+/g) ?? []) {
    const [head = '', ...parameters] = member.split(';').map((part) => part.trim());
    const name = /^"(.*)"$/.exec(head)?.[1] ?? head;
    const map = new Map<string, string>();
    for (const parameter of parameters) {
      const at = parameter.indexOf('=');
      if (at > 0) map.set(parameter.slice(0, at).trim(), parameter.slice(at + 1).trim());
    }
    found.push({ name, parameters: map });
  }
  return found;
}

const integer = (value: string | undefined) => (value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined);

/** The most constraining policy of the answer (the fewest requests left), or undefined when it names none. */
export function readRateLimit(headers: Headers, now = Date.now()): RateLimitState | undefined {
  const policies = items(headers.get('RateLimit-Policy'));
  let tightest: RateLimitState | undefined;
  for (const { name, parameters } of items(headers.get('RateLimit'))) {
    const remaining = integer(parameters.get('r'));
    if (remaining === undefined) continue;
    const resetSeconds = integer(parameters.get('t')) ?? 0;
    const policy = policies.find((each) => each.name === name)?.parameters;
    const state: RateLimitState = {
      policy: name,
      limit: integer(policy?.get('q')),
      remaining,
      resetSeconds,
      windowSeconds: integer(policy?.get('w')),
      resetAt: new Date(now + resetSeconds * 1000),
    };
    if (!tightest || state.remaining < tightest.remaining) tightest = state;
  }
  return tightest;
}
