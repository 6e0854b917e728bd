// The sandbox (`npm run sandbox`): the real service on an in-memory database, where any well-formed key is an
// account of its own, made on its first request with a few records to start from. Nothing survives a
// restart. Only the authentication differs from the service: the app, validation and storage are the same.
import { createHash } from 'node:crypto';
import { READ_SCOPES, SCOPES } from './accounts/key-policy.js';
import type { Account } from './accounts/keys.js';
import type { Database } from './db/database.js';
import type { KeyCheck } from './http/access/auth.js';
import { RESOURCES } from './resources.js';

/** One connection to one in-memory SQLite database: it lives and dies with the process. */
export const SANDBOX_DATABASE_URL = 'sqlite::memory:';

/** A sandbox key: `dss_` and at least 4 letters, digits, `_` or `-` (a real key's shape fits too). */
export const SANDBOX_KEY = /^dss_[A-Za-z0-9_-]{4,200}$/;
export const SANDBOX_KEY_RULE = 'dss_ followed by at least 4 letters, digits, _ or -';

/**
 * A sandbox key may end in scopes, to try a limited key without an operator: `~read` (every read scope) or
 * `~spaces.read`, several in a row (`~spaces.read~domains.read`). A bearer token cannot hold `:`, so the scope's
 * `:` is written `.`. The account is the key's without the suffix: the limited key sees the same records.
 */
export const SANDBOX_SCOPES_RULE =
  'optionally ending in ~read or ~<scope with . for :>, as dss_sandbox_alice~spaces.read';

/** The token's account part and the scopes its suffix names; undefined for a suffix that names no scope. */
export function sandboxToken(token: string): { account: string; scopes?: string[] } | undefined {
  const [account = '', ...suffix] = token.split('~');
  if (suffix.length === 0) return { account };
  const scopes = suffix.flatMap((part) => (part === 'read' ? READ_SCOPES : [part.replace('.', ':')]));
  const known = (SCOPES as readonly string[]).includes.bind(SCOPES);
  return scopes.every(known) ? { account, scopes: [...new Set(scopes)].sort() } : undefined;
}

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

/** How many accounts the sandbox keeps at most, by default (SANDBOX_MAX_ACCOUNTS). */
export const SANDBOX_MAX_ACCOUNTS = 1000;

/** Reads SANDBOX_MAX_ACCOUNTS: an integer from 1 to 1,000,000; the problem's sentence when it is not one. */
export function sandboxMaxAccounts(value: string | undefined): number | { error: string } {
  if (value === undefined || value.trim() === '') return SANDBOX_MAX_ACCOUNTS;
  const count = Number(value.trim());
  if (!/^\d{1,7}$/.test(value.trim()) || count < 1 || count > 1_000_000) {
    return { error: `SANDBOX_MAX_ACCOUNTS must be an integer from 1 to 1000000 (got "${value}")` };
  }
  return count;
}

/** Why `WORKERS` > 1 cannot run the sandbox, or undefined when it can. */
export function sandboxWorkersProblem(workers: number): string | undefined {
  return workers > 1
    ? `WORKERS=${workers} cannot run the sandbox: its database is in the memory of one process, so each worker ` +
        'would have its own (an account made by one worker unknown to the next); run it with WORKERS=1.'
    : undefined;
}

// Answers that refuse a request before a handler ran (unreadable, not acceptable, invalid, over quota): such a
// request does not make an account, nor does one that got no answer at all.
const REFUSED = new Set([400, 406, 413, 415, 422, 429]);

interface SandboxAccount {
  account: Promise<Account>;
  /** Whether a request of this key has been served; until then a refusal takes the account away again. */
  kept: boolean;
  inFlight: number;
}

/**
 * Authentication for the sandbox: a well-formed key is its account, created (and seeded) on first use and kept
 * only when that request passes validation. At most `maxAccounts` are kept: making one more deletes the least
 * recently used with its records, so that the sandbox's memory is bounded whatever keys it is sent.
 */
export function sandboxAccounts(db: Database, maxAccounts = SANDBOX_MAX_ACCOUNTS): KeyCheck {
  // In order of last use: the first entry is the least recently used. One creation per token, even when its
  // first requests arrive together.
  const accounts = new Map<string, SandboxAccount>();
  // Deletions under way, so that a token used again waits for its old account to be gone before it is made anew.
  const deleting = new Map<string, Promise<void>>();

  const forget = (hash: string, entry: SandboxAccount) => {
    if (accounts.get(hash) === entry) accounts.delete(hash);
    const deleted = entry.account
      .then((account) => db.deleteFrom('accounts').where('id', '=', account.id).execute())
      .then(
        () => undefined,
        () => undefined,
      );
    deleting.set(hash, deleted);
    deleted.then(() => {
      if (deleting.get(hash) === deleted) deleting.delete(hash);
    });
  };

  const check: KeyCheck = async (token, res) => {
    const parsed = sandboxToken(token);
    if (!parsed || !SANDBOX_KEY.test(parsed.account)) return undefined;
    const hash = createHash('sha256').update(parsed.account).digest('hex');
    let entry = accounts.get(hash);
    if (entry) {
      accounts.delete(hash);
      accounts.set(hash, entry);
    } else {
      const created: SandboxAccount = {
        account: (deleting.get(hash) ?? Promise.resolve()).then(() => createAccount(db, hash)),
        kept: false,
        inFlight: 0,
      };
      entry = created;
      accounts.set(hash, created);
      created.account.catch(() => {
        if (accounts.get(hash) === created) accounts.delete(hash);
      });
      for (const [oldest, old] of accounts) {
        if (accounts.size <= maxAccounts) break;
        forget(oldest, old);
      }
    }
    if (!entry.kept && res) {
      const pending = entry;
      pending.inFlight++;
      res.once('close', () => {
        pending.inFlight--;
        if (res.writableFinished && !REFUSED.has(res.statusCode) && res.statusCode < 500) pending.kept = true;
        else if (!pending.kept && pending.inFlight === 0) forget(hash, pending);
      });
    }
    const { scopes } = parsed;
    return scopes ? { ...(await entry.account), policy: { scopes: new Set(scopes) } } : entry.account;
  };
  check.invalidDetail = `The sandbox takes any key of the form ${SANDBOX_KEY_RULE}, as "Authorization: Bearer dss_sandbox_alice"; each is an account of its own. A key ${SANDBOX_SCOPES_RULE}, has only those scopes.`;
  return check;
}

/**
 * Settings the sandbox has unless the environment says otherwise: webhooks may target this machine (a
 * developer's receiver on http://127.0.0.1, the conformance runner's), as the sandbox is one developer's.
 */
export const SANDBOX_SETTINGS = { WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' } as const;

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
    'A key ending in ~read (or ~spaces.read, ~domains.write, ...) is the same account with only those scopes:',
    '',
    `  curl -s -X DELETE -H 'Authorization: Bearer dss_sandbox_alice~read' ${apiUrl}/domains/1   # 403`,
    '',
    'Webhooks may target this machine (http://127.0.0.1:<port>/...); WEBHOOK_ALLOW_PRIVATE_TARGETS=0 refuses them.',
    '',
  ];
}
