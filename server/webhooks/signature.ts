// Signing by the Standard Webhooks specification: `whsec_` secrets (base64 of 24 random bytes), and the
// `webhook-signature` header, `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret that signs.
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function newSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** The key a secret stands for: the base64 after `whsec_`. */
function keyOf(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}

/** One signature, `v1,<base64>`, of the message the specification defines. */
export function sign(secret: string, id: string, timestampS: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The headers of one delivery attempt. `secrets`: the current secret first, then the previous one during a
 * rotation's overlap; each signs, and the signatures are space-separated.
 */
export function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampS: number,
  body: string,
): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': secrets.map((secret) => sign(secret, id, timestampS, body)).join(' '),
  };
}
