// The client's verifyWebhook, synchronous: its HMAC-SHA256 (client/src/hmac-sha256.ts) agrees with node:crypto on
// every length around SHA-256's block size, long keys and long bodies; it verifies what the standardwebhooks
// package signs, and throws at once (no promise) on a forged, altered, stale or unsigned delivery.
import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { hmacSha256, sha256 } from '../../client/src/hmac-sha256.js';
import { verifyWebhook, WebhookVerificationError } from '../../client/src/index.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('hmacSha256', () => {
  it('agrees with node:crypto for every message length from 0 to 300 bytes and for 64 KiB', () => {
    const key = randomBytes(24);
    for (const length of [...Array.from({ length: 301 }, (_, i) => i), 65_536, 100_003]) {
      const message = randomBytes(length);
      expect(hex(hmacSha256(key, message)), `length ${length}`).toBe(
        createHmac('sha256', key).update(message).digest('hex'),
      );
    }
  });

  it('agrees for keys shorter than, equal to and longer than a block', () => {
    const message = Buffer.from('evt_1.1700000000.{"a":"é"}');
    for (const length of [0, 1, 32, 63, 64, 65, 200]) {
      const key = randomBytes(length);
      expect(hex(hmacSha256(key, message)), `key ${length}`).toBe(
        createHmac('sha256', key).update(message).digest('hex'),
      );
    }
  });

  it('hashes the FIPS 180-4 examples', () => {
    expect(hex(sha256(new TextEncoder().encode('abc')))).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
    expect(hex(sha256(new Uint8Array()))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const body = JSON.stringify({ id: 'evt_000000000000000000000001', type: 'space.created', note: 'ü ✓' });
  const now = Date.now();
  const signed = (at = now) => {
    const id = 'evt_000000000000000000000001';
    const timestamp = new Date(at);
    const signature = new Webhook(secret).sign(id, timestamp, body);
    return {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at / 1000)),
      'webhook-signature': signature,
    };
  };

  it('returns the event of what standardwebhooks signs, not a promise', () => {
    const event = verifyWebhook(secret, body, signed());
    expect(event).not.toBeInstanceOf(Promise);
    expect(event).toEqual(JSON.parse(body));
  });

  it('takes a Headers object too', () => {
    expect(verifyWebhook(secret, body, new Headers(signed())).id).toBe('evt_000000000000000000000001');
  });

  it.each([
    ['another secret', () => [`whsec_${randomBytes(24).toString('base64')}`, body, signed()]],
    ['a changed body', () => [secret, `${body} `, signed()]],
    ['a forged signature', () => [secret, body, { ...signed(), 'webhook-signature': `v1,${'A'.repeat(43)}=` }]],
    ['no signature', () => [secret, body, { ...signed(), 'webhook-signature': '' }]],
    ['a stale timestamp', () => [secret, body, signed(now - 10 * 60_000)]],
    ['another id', () => [secret, body, { ...signed(), 'webhook-id': 'evt_000000000000000000000002' }]],
  ] as const)('throws at once on %s', (_, args) => {
    const [key, text, headers] = args() as unknown as [string, string, Record<string, string>];
    let thrown: unknown;
    try {
      // No await: what a receiver that forgot it does.
      verifyWebhook(key, text, headers);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookVerificationError);
  });
});
