// Table types for kysely. Timestamps are RFC 3339 strings here; a driver that returns Date is normalised
// by `toIso` in the repositories.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<string | Date, string, string>;
type NullableTimestamp = ColumnType<string | Date | null, string | null | undefined, string | null>;

export interface AccountsTable {
  id: Generated<number>;
  name: string;
  created_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<number>;
  /** The public part of a key, shown in `keys list` and used to find the row. */
  public_id: string;
  account_id: number;
  label: string | null;
  /** SHA-256 of the secret part, hex. The secret itself is never stored. */
  secret_hash: string;
  created_at: Timestamp;
  revoked_at: Timestamp | null;
  /** When the key last authenticated a request, to within a minute (written at most once a minute per key). */
  last_used_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
  /** The scopes it holds, space-separated; null: every scope (server/accounts/key-policy.ts). */
  scopes: ColumnType<string | null, string | null | undefined, string | null>;
  /** When it stops working; null: never. A rotated key's is the end of its overlap. */
  expires_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
  /** The client address ranges it may be used from, CIDR, comma-separated; null: any address. */
  allowed_ips: ColumnType<string | null, string | null | undefined, string | null>;
  /** The public id of the key that replaced it (`keys rotate`); null: not rotated. */
  replaced_by: ColumnType<string | null, string | null | undefined, string | null>;
  /** When its api_key.expired event was written (migration 0012); null: not yet, or it has not expired. */
  expiry_noted_at: ColumnType<string | Date | null, string | null | undefined, string | null>;
}

export interface DomainsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  /** Folded form of the name (and of its Unicode form) that search and sort use. */
  name_key: string;
  index_page: string | null;
  not_found_page: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Starts at 1 and goes up by one with every change; the record's ETag is made of it. */
  version: Generated<number>;
  /** pending, active, misconfigured, claimed_elsewhere or expired (server/domains/check-rules.ts). */
  status: string;
  /** The random part of the TXT value that proves this domain (128 bits, base64url). */
  verification_token: string;
  /** When the domain entered its current status: the start of a pending claim's expiry or of the grace period. */
  state_since: Timestamp;
  verified_at: NullableTimestamp;
  last_checked_at: NullableTimestamp;
  /** When the scheduler checks next; null for states that are not checked. A claimed check moves it ahead. */
  next_check_at: NullableTimestamp;
  claimed_elsewhere_at: NullableTimestamp;
  /** The last check's observation as JSON; null before the first check. */
  observation: string | null;
  /** The previous release's window of the verify limit (this one counts in domain_verify_windows). */
  verify_window_started_at: NullableTimestamp;
  verify_count: Generated<number>;
  /** The last routing check's code (server/domains/routing-rules.ts); `not_checked` before it (migration 0011). */
  routing_code: Generated<string>;
  /** The last routing check's message and observed answers as JSON; null before it. */
  routing: string | null;
  routing_checked_at: NullableTimestamp;
  /** The record's metadata as a JSON object of strings (server/metadata/); `{}` when none. */
  metadata: Generated<string>;
}

export interface SpacesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  name_key: string;
  color: number;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: Generated<number>;
  metadata: Generated<string>;
}

/** One metadata pair of a record, for exact-match filters (migration 0011); tables `<records>_metadata`. */
export interface MetadataPairsTable {
  record_id: number;
  account_id: number;
  key: string;
  value: string;
}

/** The Idempotency-Keys of an account with the answer each was first given (see server/idempotency/). */
export interface IdempotencyKeysTable {
  account_id: number;
  key: string;
  /** SHA-256 of the method, path and parsed body of the first request, hex. */
  fingerprint: string;
  /** Who holds a pending key, and since when; a lock older than the lock timeout may be taken over. */
  lock_token: string | null;
  locked_at: Timestamp | null;
  /** The saved answer; null while the first request is still running. */
  status: number | null;
  /** JSON object of the saved response headers (Location, ETag). */
  headers: string | null;
  /** The saved JSON body. */
  body: string | null;
  created_at: Timestamp;
}

/**
 * The tables of the records an account owns: listed, counted and searched alike (server/db/owned.ts and
 * listing.ts). The database layer owns this list; each resource module (server/resources.ts) names one of them,
 * and a new resource adds its table here and to DB.
 */
export const RESOURCE_TABLES = ['domains', 'spaces'] as const;
export type ResourceTable = (typeof RESOURCE_TABLES)[number];

/** Every table of the service's data (the migrations' own bookkeeping aside): what a backup must hold. */
export const DATA_TABLES = ['accounts', 'api_keys', ...RESOURCE_TABLES, 'idempotency_keys'] as const;

/** How many records of one resource an account holds, kept by triggers (migration 0004). */
export interface RecordCountsTable {
  account_id: number;
  resource: ResourceTable;
  total: number;
}

/** Secrets every instance on this database shares (migration 0008), made at the first start: e.g. the cursors' key. */
export interface ServiceSecretsTable {
  name: string;
  /** base64url of random bytes. */
  value: string;
}

/** The event log: one row per change, written in the change's own transaction (server/events/outbox.ts). */
export interface EventsTable {
  id: Generated<number>;
  /** `evt_` and 24 hex digits: the id the API and the `webhook-id` header show. */
  public_id: string;
  account_id: number;
  type: string;
  created_at: Timestamp;
  /** The JSON body of every delivery of the event. */
  payload: string;
  /** The W3C traceparent of the span that wrote it, while tracing was on (its deliveries continue that trace). */
  trace_parent: ColumnType<string | null, string | null | undefined, string | null>;
  /** The id of the key whose request made the change (migration 0012; null before it, and for no key). */
  key_id: string | null;
  /** The id of the record the event is about, as text (migration 0012; null before it). */
  object_id: string | null;
}

export interface WebhookEndpointsTable {
  id: Generated<number>;
  account_id: number;
  url: string;
  /** JSON array of event types, `["*"]` for all. */
  enabled_events: string;
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Timestamp | null;
  secret_rotated_at: Timestamp | null;
  failing_since: Timestamp | null;
  /** When the webhook_endpoint.failing notice of the current failing period was recorded (null: not yet). */
  failing_notice_at: Timestamp | null;
  /** Attempts per second across instances; null for none. */
  rate_limit: number | null;
  /** JSON object of header names to values every delivery carries; null for none. */
  headers: string | null;
  /** Until when a Retry-After (429, 503) holds the endpoint's deliveries. */
  paused_until: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  metadata: Generated<string>;
}

/** An event to deliver to one endpoint (server/webhooks/deliveries.ts claims the due ones). */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  event_id: number;
  state: 'pending' | 'succeeded' | 'failed' | 'cancelled';
  attempts: Generated<number>;
  /** 1: sent even while the endpoint is disabled (a test, a redelivery to that endpoint by name). */
  forced: Generated<number>;
  next_attempt_at: Timestamp;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
  created_at: Timestamp;
  /** The recovery that queued it (server/webhooks/recoveries.ts); null for every other delivery. */
  recovery_id?: number | null;
}

/** One attempt of a delivery, as GET /webhook-endpoints/{id}/deliveries shows it. */
export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  endpoint_id: number;
  attempt: number;
  attempted_at: Timestamp;
  status: 'succeeded' | 'failed';
  response_status: number | null;
  latency_ms: number;
  response_body: string | null;
  error: string | null;
  next_attempt_at: Timestamp | null;
  /** The Retry-After (seconds) the answer asked for and that was honoured; null when none. */
  retry_after_s: number | null;
}

/** A recovery of an endpoint's events (server/webhooks/recoveries.ts): its window and how far it has walked. */
export interface WebhookRecoveriesTable {
  id: Generated<number>;
  account_id: number;
  endpoint_id: number;
  since: Timestamp;
  until: Timestamp;
  status: 'running' | 'completed' | 'failed';
  queued: Generated<number>;
  skipped: Generated<number>;
  /** The last event looked at (events are walked by id, oldest first). */
  after_event_id: Generated<number>;
  claimed_by: string | null;
  claimed_until: Timestamp | null;
  stepped_at: Timestamp;
  created_at: Timestamp;
  completed_at: Timestamp | null;
}

/** The per-domain verify limit's current window, by account and name (server/domains/checks.ts). */
export interface DomainVerifyWindowsTable {
  account_id: number;
  name: string;
  started_at: Timestamp;
  count: number;
}

export interface DB {
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webhook_recoveries: WebhookRecoveriesTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  domains: DomainsTable;
  domain_verify_windows: DomainVerifyWindowsTable;
  spaces: SpacesTable;
  idempotency_keys: IdempotencyKeysTable;
  record_counts: RecordCountsTable;
  service_secrets: ServiceSecretsTable;
  domains_metadata: MetadataPairsTable;
  spaces_metadata: MetadataPairsTable;
  webhook_endpoints_metadata: MetadataPairsTable;
}
