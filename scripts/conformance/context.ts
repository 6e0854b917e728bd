// What every phase of a run shares: the spec model, the plan, the results and the accounts.

import type { Resource, SpecModel } from '../../server/spec-model.js';
import type { Budget, Quota } from './budget.js';
import type { Plan } from './cases.js';
import type { Exchange, Secret } from './http.js';
import type { KeyScopes } from './key-scopes.js';
import type { RateLimitTracker } from './rate-limit-fields.js';
import type { Refusal } from './refusals.js';
import type { Results } from './results.js';
import type { Rotation } from './rotation.js';

export interface Account {
  key: string;
  /** Shell variable the key is shown as in curl lines. */
  variable: string;
}

export type Profile = 'auto' | 'server' | 'mock';

export interface Context {
  model: SpecModel;
  plan: Plan;
  results: Results;
  baseUrl: string;
  primary: Account;
  second?: Account;
  /** A key of the primary account holding only read scopes, for the scope_enforced check. */
  readOnly?: Account;
  secrets: Secret[];
  profile: Profile;
  concurrency: number;
  /** Why the stateful checks are skipped, when they are. */
  stateless?: string;
  /** Records made by the run, deleted at its end. */
  created: Array<{ resource: Resource; id: string; account: Account }>;
  /** Per resource name: records the run made, and those the clean-up could not delete (the report says so). */
  ledger: Map<string, { created: number; left: number }>;
  /** Per `resource/account variable`: the limit the account met (refusals.ts); no more creates are sent. */
  limits: Map<string, { refusal: Refusal; exchange: Exchange }>;
  /** Per resource name: why the deployment refused a create of it, as the contract allows (refusals.ts). */
  refusedCreates: Map<string, string>;
  /** One record per resource, made at the start, that item operations are tried on. */
  fixtures: Map<string, { id: string; body: unknown }>;
  /** Per resource, the ids of the records the valid show/update cases work on (made at the start of that phase). */
  targets: Map<string, string[]>;
  /** Aborted when the run is interrupted (SIGINT, SIGTERM); `cleaning` lets the clean-up's requests through. */
  signal?: AbortSignal;
  cleaning?: boolean;
  /** What the webhook checks did, for the report (webhooks.ts). */
  webhooks: string[];
  /** The endpoint subscribed to the run's receiver, once deliveries to it came (webhooks.ts). */
  receiverEndpoint?: { resource: Resource; id: string };
  /** Which slice of each probe family this run sends, and the coverage across runs. */
  rotation: Rotation;
  /** Credential probes the operator allows this run (--auth-probes), instead of half the address's budget. */
  authProbes?: number;
  onExchange?: (exchange: Exchange, operation: string | undefined) => void;
  /** What the primary key was seen to hold and to lack (key-scopes.ts). */
  keyScopes: KeyScopes;
  /** The RateLimit fields seen so far. */
  rateLimit: RateLimitTracker;
  /** The budgets those fields state: the primary key's quota, the address's for failed authentication. */
  budget: Budget;
  /** This run's share of the primary key's quota, and what was left of the window when it was taken. */
  share?: { requests: number; remainingAtStart: number };
  /** How many generated cases ran when they were sized to the key's quota. */
  sized?: { valid: number; invalid: number; quota: Quota };
  log(line: string): void;
}
