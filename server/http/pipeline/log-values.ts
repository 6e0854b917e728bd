// What the request log may carry of a request's own text (its URL, header names and values): each cut to a bound,
// so that an unauthenticated request of a 15 KB header or an 8 KB path, refused at once, makes a log line of a
// few kilobytes, whatever it holds (quotes and bytes >= 0x80 take two bytes each in JSON).
import type { IncomingHttpHeaders } from 'node:http';

export const LOGGED_URL_CHARS = 1024;
export const LOGGED_NAME_CHARS = 64;
export const LOGGED_VALUE_CHARS = 256;
/** All header names and values of one line together. */
export const LOGGED_HEADERS_CHARS = 2048;

/** `text` whole when it is short enough, else its first `max` characters and how many more there were. */
export function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...[${text.length - max} more]`;
}

/** Headers whose values must never reach a log line: each is logged as REDACTED. */
const REDACTED_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'x-api-key']);
export const REDACTED = '[Redacted]';

/**
 * The headers as the log shows them: credentials redacted, names and values cut to their bounds, in arrival
 * order until the whole budget is spent, then how many were left out.
 */
export function loggedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[] | number> {
  const logged: Record<string, string | string[] | number> = {};
  let budget = LOGGED_HEADERS_CHARS;
  let left = 0;
  // A plain loop over the names, a string value taken as it is: no arrays made for the common case, per request.
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined) continue;
    if (budget <= 0) {
      left++;
      continue;
    }
    const key = bounded(name, LOGGED_NAME_CHARS);
    if (REDACTED_HEADERS.has(name)) {
      logged[key] = REDACTED;
      budget -= key.length + REDACTED.length;
      continue;
    }
    if (typeof value === 'string') {
      const one = bounded(value, LOGGED_VALUE_CHARS);
      logged[key] = one;
      budget -= key.length + one.length;
      continue;
    }
    const values = value.map((one) => bounded(one, LOGGED_VALUE_CHARS));
    logged[key] = values;
    budget -= key.length + values.reduce((sum, one) => sum + one.length, 0);
  }
  if (left > 0) logged['...'] = left;
  return logged;
}
