// The helpers of the account's API keys (/api-keys), in the style of the other helpers: each throws an ApiError
// on failure and resolves to the record itself; listAll follows the cursor of `links.next`. Bodies are JSON.
import { byCursor, type CallOptions, type CreateOptions, type Send } from './resources.js';
import type { ApiKey, ApiKeyCreate, ApiKeyListParams, ApiKeyPage, ApiKeyRotation, ApiKeyWithSecret } from './types.js';

export interface ApiKeysApi {
  /** The key the client calls with: its scopes, expiry, ranges, whether it was replaced. Any valid key. */
  current(options?: CallOptions): Promise<ApiKey>;
  /** One page of the account's keys, newest first: `{ data, links }`. Scope: `api_keys:read`. */
  list(params?: ApiKeyListParams, options?: CallOptions): Promise<ApiKeyPage>;
  /** Every key of the account, newest first, fetched a page at a time. Scope: `api_keys:read`. */
  listAll(params?: ApiKeyListParams, options?: CallOptions): AsyncGenerator<ApiKey, void, undefined>;
  /**
   * Makes a key no wider than the calling one (what `body` leaves out is the caller's own); resolves to the key
   * and its `secret`, shown this once. Sends no Idempotency-Key unless `options.idempotencyKey` names one: a
   * replay answers `secret` null, so a retried create would lose the secret. Scope: `api_keys:write`.
   */
  create(body?: ApiKeyCreate, options?: CreateOptions): Promise<ApiKeyWithSecret>;
  /**
   * Makes the key's successor (its `secret` shown this once); the old key works for `overlap` (`24h` by
   * default, `0s` ends it now). Scope: `api_keys:write`.
   */
  rotate(keyId: string, overlap?: string, options?: CallOptions): Promise<ApiKeyRotation>;
  /** Revokes the key (every instance refuses it within half a second). Scope: `api_keys:write`. */
  revoke(keyId: string, options?: CallOptions): Promise<void>;
}

export function apiKeysApi(send: Send): ApiKeysApi {
  const list = async (params?: ApiKeyListParams, options?: CallOptions) =>
    (await send('GET', '/api-keys', { params: { query: params ?? {} } }, options)).data as ApiKeyPage;
  const byKeyId = (keyId: string) => ({ params: { path: { id: keyId } } });
  return {
    current: async (options) => ((await send('GET', '/api-keys/current', {}, options)).data as { data: ApiKey }).data,
    list,
    listAll(params, options) {
      const { after: first, ...query } = { per_page: 100, ...params } as ApiKeyListParams & { after?: string };
      return byCursor((after) => list({ ...query, ...(after ? { after } : {}) } as ApiKeyListParams, options), first);
    },
    async create(body, options) {
      const key = options?.idempotencyKey;
      const headers = typeof key === 'string' ? { 'Idempotency-Key': key } : {};
      const { data } = await send('POST', '/api-keys', { body: body ?? {}, headers }, options);
      const { data: record, secret } = data as { data: ApiKey; secret: string | null };
      return { ...record, secret };
    },
    async rotate(keyId, overlap, options) {
      const body = overlap === undefined ? {} : { overlap };
      const { data } = await send('POST', '/api-keys/{id}/rotate', { ...byKeyId(keyId), body }, options);
      const { data: record, secret, replaced } = data as { data: ApiKey; secret: string; replaced: ApiKey };
      return { ...record, secret, replaced };
    },
    async revoke(keyId, options) {
      await send('DELETE', '/api-keys/{id}', byKeyId(keyId), options);
    },
  };
}
