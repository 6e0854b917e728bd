// Persistence of domains. Takes and returns plain records; knows nothing of HTTP.
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { type Database, toIso } from '../db/database.js';
import type { ListQuery } from '../db/listing.js';
import {
  type ChangeCause,
  type ChangeLog,
  type ExpectedVersions,
  ownedRecords,
  type Updated,
  type Versioned,
} from '../db/owned.js';
import type { DomainsTable } from '../db/schema.js';
import { insertPairs, newMetadata, updateWithMetadata } from '../metadata/pairs.js';
import { type Metadata, parseMetadata, serializeMetadata } from '../metadata/rules.js';
import {
  type CheckSchedule,
  challengeName,
  challengeValue,
  type DomainStatus,
  holdsName,
  type Observation,
} from './check-rules.js';
import { domainNameKey } from './fields.js';
import { type RoutingCode, type RoutingObservation, routingNotChecked } from './routing-rules.js';
import {
  type DnsRecord,
  type DomainKind,
  dnsRecords,
  domainKind,
  NO_TARGETS,
  type RoutingTargets,
  routingWay,
} from './routing-targets.js';

export interface DomainRecord {
  id: number;
  name: string;
  index_page: string | null;
  not_found_page: string | null;
  status: DomainStatus;
  verification: { type: 'txt'; name: string; value: string };
  kind: DomainKind;
  dns_records: DnsRecord[];
  routing: DomainRouting;
  metadata: Metadata;
  verified_at: string | null;
  last_checked_at: string | null;
  next_check_at: string | null;
  observation: Observation;
  claimed_elsewhere_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DomainRouting extends RoutingObservation {
  checked_at: string | null;
}

export interface NewDomain {
  name: string;
  index_page: string | null;
  not_found_page: string | null;
  /** As sent: an empty value sets nothing. */
  metadata?: Metadata;
}

/** The pages to change, and the metadata to merge (an empty value removes a key). */
export type DomainChanges = Partial<Pick<NewDomain, 'index_page' | 'not_found_page' | 'metadata'>>;

/** This account already has a domain of this name. */
export class DuplicateDomainError extends Error {
  constructor(readonly domainName: string) {
    super(`A domain named ${domainName} already exists.`);
  }
}

/** Another account holds this name (active or misconfigured). */
export class NameHeldError extends Error {
  constructor(readonly domainName: string) {
    super(`The domain name ${domainName} is held by another account.`);
  }
}

export type DomainRow = Selectable<DomainsTable>;

/** A new verification token: 128 random bits, URL-safe base64 (22 characters). */
export const newVerificationToken = () => randomBytes(16).toString('base64url');

const iso = (value: string | Date | null) => (value === null ? null : toIso(value));

/** The observation of a domain that was never checked. */
export function notChecked(name: string, token: string): Observation {
  return {
    code: 'not_checked',
    message: `Not checked yet. Publish a TXT record at ${challengeName(name)} with the value ${challengeValue(token)}, then POST /domains/{id}/verify.`,
    values: [],
  };
}

/** A domain stored before states existed (migration 0005) and not checked since. */
function grandfathered(name: string, token: string): Observation {
  return {
    code: 'grandfathered',
    message: `Stored before domains were verified; active until its first check. Publish a TXT record at ${challengeName(name)} with the value ${challengeValue(token)} to keep it.`,
    values: [],
  };
}

/**
 * The domain's routing as the API shows it: `no_target` whenever the service has no target for it (whatever was
 * stored before the settings changed), `not_checked` until a check looked with targets, else the last check's.
 */
export function routingOf(row: DomainRow, kind: DomainKind, targets: RoutingTargets): DomainRouting {
  const code = row.routing_code as RoutingCode;
  if (routingWay(kind, targets) === 'none' || row.routing === null || code === 'no_target') {
    return { ...routingNotChecked(row.name, kind, targets), checked_at: null };
  }
  const { message, observed } = JSON.parse(row.routing) as Omit<RoutingObservation, 'code'>;
  return { code, message, observed, checked_at: iso(row.routing_checked_at) };
}

/** The domain's record as the API shows it; `targets` (the operator's settings) decide its routing records. */
export function toRecord(row: DomainRow, targets: RoutingTargets = NO_TARGETS): DomainRecord {
  const kind = domainKind(row.name);
  const observation = row.observation
    ? (JSON.parse(row.observation) as Observation)
    : row.status === 'active' && row.last_checked_at === null
      ? grandfathered(row.name, row.verification_token)
      : notChecked(row.name, row.verification_token);
  return {
    id: Number(row.id),
    name: row.name,
    index_page: row.index_page,
    not_found_page: row.not_found_page,
    status: row.status as DomainStatus,
    verification: { type: 'txt', name: challengeName(row.name), value: challengeValue(row.verification_token) },
    kind,
    dns_records: dnsRecords(row.name, row.verification_token, kind, targets),
    routing: routingOf(row, kind, targets),
    metadata: parseMetadata(row.metadata),
    verified_at: iso(row.verified_at),
    last_checked_at: iso(row.last_checked_at),
    next_check_at: iso(row.next_check_at),
    observation,
    claimed_elsewhere_at: iso(row.claimed_elsewhere_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** `log` records each change in the change's own transaction (the event log). */
export function domainRepository(
  db: Database,
  schedule: Pick<CheckSchedule, 'pendingFirstMs' | 'pendingExpiryMs'>,
  log: ChangeLog<DomainRecord>,
  targets: RoutingTargets = NO_TARGETS,
) {
  const record = (row: DomainRow) => toRecord(row, targets);
  const owned = ownedRecords(db, 'domains', record, log);
  return {
    ...owned,

    /** One page of the account's domains, those the filters keep when given (`filters`). */
    list(accountId: number, query: ListQuery) {
      return owned.list(accountId, query);
    },

    /** The account's domain of this (stored) name, if it has one. */
    async idByName(accountId: number, name: string): Promise<number | undefined> {
      const row = await db
        .selectFrom('domains')
        .select('id')
        .where('account_id', '=', accountId)
        .where('name', '=', name)
        .executeTakeFirst();
      return row && Number(row.id);
    },

    /**
     * Stores a pending domain. Throws DuplicateDomainError when the account has one of this name, NameHeldError
     * when another account holds the name.
     */
    async create(accountId: number, domain: NewDomain, cause: ChangeCause): Promise<Versioned<DomainRecord>> {
      // A pending claim blocks nobody, so a store that races a proof elsewhere and wins is harmless: it is pending.
      if (await this.heldElsewhere(accountId, domain.name)) throw new NameHeldError(domain.name);
      const now = new Date();
      const { metadata: sent, ...fields } = domain;
      const metadata = newMetadata(sent);
      // ON CONFLICT DO NOTHING rather than catching the unique violation: on PostgreSQL a failed statement
      // aborts the transaction it runs in (an idempotent create's), and the 409 still has to read and save in it.
      const created = await owned.created(
        accountId,
        async (trx) => {
          const row = await trx
            .insertInto('domains')
            .values({
              ...fields,
              metadata: serializeMetadata(metadata),
              account_id: accountId,
              name_key: domainNameKey(domain.name),
              status: 'pending',
              verification_token: newVerificationToken(),
              state_since: now.toISOString(),
              // The first check, and at the latest the claim's expiry (a pending expiry shorter than the first wait).
              next_check_at: new Date(
                now.getTime() + Math.min(schedule.pendingFirstMs, schedule.pendingExpiryMs),
              ).toISOString(),
              created_at: now.toISOString(),
              updated_at: now.toISOString(),
            })
            .onConflict((conflict) => conflict.columns(['account_id', 'name']).doNothing())
            .returningAll()
            .executeTakeFirst();
          if (row) await insertPairs(trx, 'domains', accountId, Number(row.id), metadata);
          return row;
        },
        cause,
      );
      if (!created) throw new DuplicateDomainError(domain.name);
      return created;
    },

    /** Whether another account than this one holds the name. */
    async heldElsewhere(accountId: number, name: string): Promise<boolean> {
      const rows = await db
        .selectFrom('domains')
        .select('status')
        .where('name', '=', name)
        .where('account_id', '!=', accountId)
        .execute();
      return rows.some((row) => holdsName(row.status));
    },

    /**
     * `changed` is false for a write of the values the record already has: it keeps its version and updated_at.
     * Throws VersionMismatchError when the record is not at one of the `expected` versions.
     */
    async update(
      accountId: number,
      id: number,
      changes: DomainChanges,
      expected: ExpectedVersions,
      cause: ChangeCause,
    ): Promise<Updated<DomainRecord> | undefined> {
      const { metadata, ...columns } = changes;
      if (metadata === undefined) return owned.change(accountId, id, columns, expected, cause);
      return updateWithMetadata(db, 'domains', accountId, id, metadata, (trx, merged) =>
        ownedRecords(trx, 'domains', record, log).change(
          accountId,
          id,
          { ...columns, metadata: merged },
          expected,
          cause,
        ),
      );
    },
  };
}

export type DomainRepository = ReturnType<typeof domainRepository>;
