// Persistence of spaces. Takes and returns plain records; knows nothing of HTTP. A space's fields are the
// contract's (generated/api.ts): a field added to the spec's schemas and to the table's columns passes through.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/api.js';
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
import { precompiledShape } from '../db/precompiled.js';
import type { SpacesTable } from '../db/schema.js';
import { insertPairs, newMetadata, updateWithMetadata } from '../metadata/pairs.js';
import { parseMetadata, serializeMetadata } from '../metadata/rules.js';

type Schemas = components['schemas'];
export type SpaceRecord = Schemas['space'];
/** The fields of a new space, its colour filled in. */
export type NewSpace = Schemas['space-store'] & { color: number };
export type SpaceChanges = Schemas['space-update'];

/** Every column is a field of the record, but the account, the search key and the version. */
function toRecord(row: Selectable<SpacesTable>): SpaceRecord {
  const {
    account_id: _account,
    name_key: _key,
    version: _version,
    metadata,
    id,
    color,
    created_at,
    updated_at,
    ...rest
  } = row;
  return {
    id: Number(id),
    ...rest,
    color: Number(color),
    metadata: parseMetadata(metadata),
    created_at: toIso(created_at),
    updated_at: toIso(updated_at),
  };
}

type Value = number | string;

/**
 * A space's insert, compiled once per engine and set of columns (server/db/precompiled.ts): every create runs
 * it. A field left out (or null) is not written, so its column's default holds.
 */
async function insertSpace(db: Database, values: Record<string, unknown>) {
  const columns = Object.keys(values)
    .filter((column) => ['number', 'string'].includes(typeof values[column]))
    .sort();
  const insert = precompiledShape(`insert spaces ${columns.join(',')}`, (on, ...args: Value[]) =>
    on
      .insertInto('spaces')
      .values(Object.fromEntries(columns.map((column, i) => [column, args[i]])) as never)
      .returningAll(),
  );
  return insert(db, ...columns.map((column) => values[column] as Value));
}

/** `log` records each change in the change's own transaction (the event log). */
export function spaceRepository(db: Database, log: ChangeLog<SpaceRecord>) {
  const owned = ownedRecords(db, 'spaces', toRecord, log);
  return {
    ...owned,

    async create(accountId: number, space: NewSpace, cause: ChangeCause): Promise<Versioned<SpaceRecord>> {
      const now = new Date().toISOString();
      const created = await owned.created(
        accountId,
        async (trx) => {
          const { metadata: sent, ...fields } = space;
          const metadata = newMetadata(sent);
          const [row] = await insertSpace(trx, {
            ...fields,
            metadata: serializeMetadata(metadata),
            account_id: accountId,
            name_key: foldText(space.name),
            created_at: now,
            updated_at: now,
          });
          if (row) await insertPairs(trx, 'spaces', accountId, Number(row.id), metadata);
          return row;
        },
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
      const { metadata, ...fields } = changes;
      const columns = fields.name === undefined ? fields : { ...fields, name_key: foldText(fields.name) };
      if (metadata === undefined) return owned.change(accountId, id, columns, expected, cause);
      return updateWithMetadata(db, 'spaces', accountId, id, metadata, (trx, merged) =>
        ownedRecords(trx, 'spaces', toRecord, log).change(
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

export type SpaceRepository = ReturnType<typeof spaceRepository>;
