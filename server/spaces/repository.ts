// Persistence of spaces. Takes and returns plain records; knows nothing of HTTP.
import type { Selectable } from 'kysely';
import { type Database, toIso } from '../db/database.js';
import { foldText } from '../db/listing.js';
import {
  type ChangeCause,
  type ChangeLog,
  type ExpectedVersions,
  ownedRecords,
  type Updated,
  type Versioned,
} from '../db/owned.js';
import { precompiledOnAny } from '../db/precompiled.js';
import type { SpacesTable } from '../db/schema.js';

export interface SpaceRecord {
  id: number;
  name: string;
  color: number;
  created_at: string;
  updated_at: string;
}

export interface NewSpace {
  name: string;
  color: number;
}

export type SpaceChanges = Partial<NewSpace>;

function toRecord(row: Selectable<SpacesTable>): SpaceRecord {
  return {
    id: Number(row.id),
    name: row.name,
    color: Number(row.color),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** A space's insert, compiled once per engine (server/db/precompiled.ts): every create runs it. */
const insertSpace = precompiledOnAny(
  (db, name: string, color: number, accountId: number, nameKey: string, now: string) =>
    db
      .insertInto('spaces')
      .values({ name, color, account_id: accountId, name_key: nameKey, created_at: now, updated_at: now })
      .returningAll(),
);

/** `log` records each change in the change's own transaction (the event log). */
export function spaceRepository(db: Database, log: ChangeLog<SpaceRecord>) {
  const owned = ownedRecords(db, 'spaces', toRecord, log);
  return {
    ...owned,

    async create(accountId: number, space: NewSpace, cause: ChangeCause): Promise<Versioned<SpaceRecord>> {
      const now = new Date().toISOString();
      const created = await owned.created(
        accountId,
        async (trx) => (await insertSpace(trx, space.name, space.color, accountId, foldText(space.name), now))[0],
        cause,
      );
      if (!created) throw new Error('space insert returned no row');
      return created;
    },

    /**
     * `changed` is false for a write of the values the record already has: it keeps its version and updated_at.
     * Throws VersionMismatchError when the record is not at one of the `expected` versions.
     */
    async update(
      accountId: number,
      id: number,
      changes: SpaceChanges,
      expected: ExpectedVersions,
      cause: ChangeCause,
    ): Promise<Updated<SpaceRecord> | undefined> {
      const withKey = changes.name === undefined ? changes : { ...changes, name_key: foldText(changes.name) };
      return owned.change(accountId, id, withKey, expected, cause);
    },
  };
}

export type SpaceRepository = ReturnType<typeof spaceRepository>;
