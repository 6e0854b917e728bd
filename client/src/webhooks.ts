// verifyWebhook: checks a delivery's Standard Webhooks signature (HMAC-SHA256 of "<id>.<timestamp>.<body>" with
// the `whsec_` secret) and its timestamp, synchronously, as the standardwebhooks package's `verify` does: it
// returns the event or throws at once, in Node.js, browsers and edge runtimes alike (hmac-sha256.ts).
import { hmacSha256 } from './hmac-sha256.js';
import type { WebhookEvent } from './types.js';

/** A delivery whose signature or timestamp does not check out: answer it 4xx and do not act on it. */
export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyOptions {
  /** How far the delivery's timestamp may be from now, in seconds (5 minutes, as the specification's libraries). */
  toleranceSeconds?: number;
  /** Now, in milliseconds since the epoch (for tests). */
  now?: number;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, string | string[] | undefined>)[name];
  return Array.isArray(value) ? value[0] : value;
}

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
const toBase64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** Compares in time that depends on the length only. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let differ = 0;
  for (let i = 0; i < a.length; i++) differ |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return differ === 0;
}

/**
 * The event a delivery carries, once its signature (any of them, during a secret rotation) and its timestamp
 * check out; throws WebhookVerificationError otherwise, synchronously (no promise to forget to await). `body` is
 * the request body exactly as received (text).
 */
export function verifyWebhook(
  secret: string,
  body: string,
  headers: HeaderSource,
  { toleranceSeconds = 300, now = Date.now() }: VerifyOptions = {},
): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-* headers');
  if (!/^\d{1,15}$/.test(timestamp) || Math.abs(now / 1000 - Number(timestamp)) > toleranceSeconds) {
    throw new WebhookVerificationError('the timestamp is too far from now');
  }
  let key: Uint8Array;
  try {
    key = fromBase64(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret);
  } catch {
    throw new TypeError('verifyWebhook: the secret is not a whsec_ secret (base64 after the prefix)');
  }
  const mac = toBase64(hmacSha256(key, new TextEncoder().encode(`${id}.${timestamp}.${body}`)));
  const matches = signatures.split(' ').some((signature) => {
    const [version, value] = signature.split(',');
    return version === 'v1' && value !== undefined && sameText(value, mac);
  });
  if (!matches) throw new WebhookVerificationError('no signature matches the secret');
  return JSON.parse(body) as WebhookEvent;
}
