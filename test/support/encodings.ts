// The two body encodings every store and update test runs in: the documented form, and JSON.
import type { ApiClient, TestAccount } from './server.js';

export const ENCODINGS = ['form', 'json'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/** The account's client that sends bodies in `encoding`. */
export const clientOf = (account: TestAccount, encoding: Encoding): ApiClient =>
  encoding === 'form' ? account.client : account.json;
