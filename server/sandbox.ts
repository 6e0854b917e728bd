// The sandbox (`npm run sandbox`): the real service on an in-memory database, where any well-formed key is an
// account of its own, made on its first request with a few records to start from. Nothing survives a
// restart. Only the authentication differs from the service: the app, validation and storage are the same.
import { createHash } from 'node:crypto';
import type { Account } from './accounts/keys.js';
import type { Database } from './db/database.js';
import type { KeyCheck } from './http/auth.js';
import { RESOURCES } from './resources.js';

/** One connection to one in-memory SQLite database: it lives and dies with the process. */
export const SANDBOX_DATABASE_URL = 'sqlite::memory:';

/** A sandbox key: `dss_` and at least 4 letters, digits, `_` or `-` (a real key's shape fits too). */
export const SANDBOX_KEY = /^dss_[A-Za-z0-9_-]{4,200}$/;
export const SANDBOX_KEY_RULE = 'dss_ followed by at least 4 letters, digits, _ or -';

async function createAccount(db: Database, tokenHash: string): Promise<Account> {
  // The account is named by the token's hash: the token itself is never stored.
  const name = `sandbox-${tokenHash}`;
  const account = await db
    .insertInto('accounts')
    .values({ name, created_at: new Date().toISOString() })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
  for (const resource of RESOURCES) await resource.seed(db, account.id, tokenHash.slice(0, 8));
  return { id: Number(account.id), name };
}

/** Authentication for the sandbox: a well-formed key is its account, created (and seeded) on first use. */
export function sandboxAccounts(db: Database): KeyCheck {
  // One creation per token, even when its first requests arrive together.
  const accounts = new Map<string, Promise<Account>>();
  const check: KeyCheck = async (token) => {
    if (!SANDBOX_KEY.test(token)) return undefined;
    const hash = createHash('sha256').update(token).digest('hex');
    let account = accounts.get(hash);
    if (!account) {
      account = createAccount(db, hash);
      accounts.set(hash, account);
      account.catch(() => accounts.delete(hash));
    }
    return account;
  };
  check.invalidDetail = `The sandbox takes any key of the form ${SANDBOX_KEY_RULE}, as "Authorization: Bearer dss_sandbox_alice"; each is an account of its own.`;
  return check;
}

/** The banner's lines for the sandbox, in place of the first key's. */
export function sandboxLines(apiUrl: string): string[] {
  return [
    '',
    'SANDBOX: an in-memory database that starts empty and is lost when the process stops. Not for real data.',
    `Any key of the form ${SANDBOX_KEY_RULE} is an account of its own, made on its first`,
    'request with 2 domains and 3 spaces to start from; no key needs issuing. Try it:',
    '',
    `  curl -s -H 'Authorization: Bearer dss_sandbox_alice' ${apiUrl}/domains`,
    '',
  ];
}
