// Persistence of domains. Takes and returns plain records; knows nothing of HTTP.
import type { Selectable } from 'kysely';
import { type Database, toIso } from '../db/database.js';
import {
  type ExpectedVersions,
  ownedRecords,
  type Updated,
  updateOwned,
  type Versioned,
  versionOf,
} from '../db/owned.js';
import type { DomainsTable } from '../db/schema.js';
import { domainNameKey } from './fields.js';

export interface DomainRecord {
  id: number;
  name: string;
  index_page: string | null;
  not_found_page: string | null;
  created_at: string;
  updated_at: string;
}

export interface NewDomain {
  name: string;
  index_page: string | null;
  not_found_page: string | null;
}

export type DomainChanges = Partial<Pick<NewDomain, 'index_page' | 'not_found_page'>>;

export class DuplicateDomainError extends Error {
  constructor(readonly domainName: string) {
    super(`A domain named ${domainName} already exists.`);
  }
}

type DomainRow = Selectable<DomainsTable>;

function toRecord(row: DomainRow): DomainRecord {
  return {
    id: Number(row.id),
    name: row.name,
    index_page: row.index_page,
    not_found_page: row.not_found_page,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function domainRepository(db: Database) {
  return {
    ...ownedRecords(db, 'domains', toRecord),

    /** The id of the account's domain of this (stored) name, if it has one. */
    async idByName(accountId: number, name: string): Promise<number | undefined> {
      const row = await db
        .selectFrom('domains')
        .select('id')
        .where('account_id', '=', accountId)
        .where('name', '=', name)
        .executeTakeFirst();
      return row && Number(row.id);
    },

    /** Throws DuplicateDomainError when any account already has a domain of this name. */
    async create(accountId: number, domain: NewDomain): Promise<Versioned<DomainRecord>> {
      const now = new Date().toISOString();
      // ON CONFLICT rather than catching the unique violation: on PostgreSQL a failed statement aborts the
      // transaction it runs in (an idempotent create's), and the 409 still has to read and save in it.
      const row = await db
        .insertInto('domains')
        .values({
          ...domain,
          account_id: accountId,
          name_key: domainNameKey(domain.name),
          created_at: now,
          updated_at: now,
        })
        .onConflict((conflict) => conflict.column('name').doNothing())
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new DuplicateDomainError(domain.name);
      return { record: toRecord(row), version: versionOf(row) };
    },

    /**
     * `changed` is false for a write of the values the record already has: it keeps its version and updated_at.
     * Throws VersionMismatchError when the record is not at one of the `expected` versions.
     */
    async update(
      accountId: number,
      id: number,
      changes: DomainChanges,
      expected: ExpectedVersions = 'any',
    ): Promise<Updated<DomainRecord> | undefined> {
      const written = await updateOwned(db, 'domains', accountId, id, changes, expected);
      return written && { record: toRecord(written.row), version: versionOf(written.row), changed: written.changed };
    },
  };
}

export type DomainRepository = ReturnType<typeof domainRepository>;
