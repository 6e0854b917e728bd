// Persistence of domains. Takes and returns plain records; knows nothing of HTTP.
import type { Selectable } from 'kysely';
import { type Database, isUniqueViolation, toIso } from '../db/database.js';
import { ownedRecords, updateOwned } from '../db/owned.js';
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

    /** Throws DuplicateDomainError when any account already has a domain of this name. */
    async create(accountId: number, domain: NewDomain): Promise<DomainRecord> {
      const now = new Date().toISOString();
      try {
        const row = await db
          .insertInto('domains')
          .values({
            ...domain,
            account_id: accountId,
            name_key: domainNameKey(domain.name),
            created_at: now,
            updated_at: now,
          })
          .returningAll()
          .executeTakeFirstOrThrow();
        return toRecord(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw new DuplicateDomainError(domain.name);
        throw error;
      }
    },

    async update(accountId: number, id: number, changes: DomainChanges): Promise<DomainRecord | undefined> {
      const row = await updateOwned(db, 'domains', accountId, id, changes);
      return row && toRecord(row);
    },
  };
}

export type DomainRepository = ReturnType<typeof domainRepository>;
