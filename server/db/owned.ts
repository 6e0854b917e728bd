// Reads and writes of one account's record by id, shared by domains and spaces. A record of another account
// is treated exactly as a missing one: the account id is part of every statement.
import type { ExpressionBuilder, Selectable, Updateable } from 'kysely';
import { type Database, lockedForUpdate } from './database.js';
import { type ListPosition, type ListQuery, listPage } from './listing.js';
import { precompiled, precompiledOnAny, precompiledShape } from './precompiled.js';
import type { DB, ResourceTable } from './schema.js';

/** The account's record by id, as a query: every read of one record builds it here. */
function byId(db: Database, table: ResourceTable, accountId: number, id: number) {
  return db.selectFrom(table).selectAll().where('account_id', '=', accountId).where('id', '=', id);
}

export async function findOwned<T extends ResourceTable>(db: Database, table: T, accountId: number, id: number) {
  return byId(db, table, accountId, id).executeTakeFirst() as Promise<Selectable<DB[T]> | undefined>;
}

/**
 * The versions a write may apply to (the If-Match of the request): any, or one of these. The check is part of
 * the write's own statement, so two writers that read the same version cannot both succeed.
 */
export type ExpectedVersions = 'any' | readonly number[];

/**
 * The record exists, but at a version the write did not expect; nothing was changed. The error handler answers it
 * as 412 (http/problems/errors.ts), whichever write threw it: no caller needs to catch it.
 */
export class VersionMismatchError extends Error {
  /** The kind of record, in the singular: `domain`, `space`. */
  readonly record: string;

  constructor(
    table: ResourceTable,
    readonly id: number,
  ) {
    const record = table.replace(/s$/, '');
    super(`${record} ${id} is not at the expected version`);
    this.record = record;
  }
}

/** A record and its version (see ExpectedVersions). */
export interface Versioned<R> {
  record: R;
  version: number;
}

/** A record after an update, and whether the update changed anything (events and version follow only a change). */
export interface Updated<R> extends Versioned<R> {
  changed: boolean;
}

/** Throws VersionMismatchError when the record exists, for a write that matched no row at the expected version. */
async function missingOrStale(
  db: Database,
  table: ResourceTable,
  accountId: number,
  id: number,
  expected: ExpectedVersions,
) {
  if (expected !== 'any' && (await findOwned(db, table, accountId, id))) throw new VersionMismatchError(table, id);
  return undefined;
}

/** The row after a write, and whether the write changed it (a write of the values it already has does not). */
export interface Written<Row> {
  row: Row;
  changed: boolean;
}

/**
 * Applies `changes` and returns the new row, one version up. A write that would change nothing (no changes,
 * or only the values the row already has) leaves the row untouched, updated_at and version too, and says so
 * with `changed: false`. Undefined when the account has no such record.
 */
export async function updateOwned<T extends ResourceTable>(
  db: Database,
  table: T,
  accountId: number,
  id: number,
  changes: Updateable<DB[T]>,
  expected: ExpectedVersions = 'any',
): Promise<Written<Selectable<DB[T]>> | undefined> {
  // An If-Match that names none of this record's versions can match no row; `in ()` is not SQL either.
  if (expected !== 'any' && expected.length === 0) return missingOrStale(db, table, accountId, id, expected);
  const columns = Object.entries(changes as Record<string, unknown>);
  const statements = updateStatements(table, columns, expected);
  const updatedAt = new Date().toISOString();

  if (columns.length > 0) {
    const [written] = await statements.updateIfDifferent(db, accountId, id, updatedAt);
    if (written) return { row: written as Selectable<DB[T]>, changed: true };
  }
  // Nothing written: the record is missing, at another version, or already holds these values.
  const [current] = await statements.current(db, accountId, id);
  if (!current) return undefined;
  requireVersion(table, id, current, expected);
  const { differs: stillDiffers, ...row } = current;
  if (!stillDiffers) return { row: row as unknown as Selectable<DB[T]>, changed: false };
  // Another write changed the values between the two statements; this one now changes them, like any write.
  const written = await updateStatement(db, table, columns, expected, accountId, id, updatedAt, false)
    .returningAll()
    .executeTakeFirst();
  return written
    ? { row: written as Selectable<DB[T]>, changed: true }
    : missingOrStale(db, table, accountId, id, expected);
}

/**
 * The update of `columns` to their values, where the row is the account's and at one of the expected versions;
 * `onlyIfDifferent`: and only where a value differs (null-safe, in the statement itself, so atomically).
 */
function updateStatement(
  db: Database,
  table: ResourceTable,
  columns: Array<[string, unknown]>,
  expected: ExpectedVersions,
  accountId: number,
  id: number,
  updatedAt: string,
  onlyIfDifferent: boolean,
) {
  return db
    .updateTable(table)
    .set((eb) => ({
      ...(Object.fromEntries(columns) as Updateable<DB[ResourceTable]>),
      updated_at: updatedAt,
      version: eb('version', '+', 1),
    }))
    .where((eb) =>
      onlyIfDifferent
        ? eb.and([owned(eb, accountId, id, expected), differs(eb, columns)])
        : owned(eb, accountId, id, expected),
    );
}

function owned(eb: ExpressionBuilder<DB, ResourceTable>, accountId: number, id: number, expected: ExpectedVersions) {
  return eb.and([
    eb('account_id', '=', accountId),
    eb('id', '=', id),
    ...(expected === 'any' ? [] : [eb('version', 'in', expected)]),
  ]);
}

function differs(eb: ExpressionBuilder<DB, ResourceTable>, columns: Array<[string, unknown]>) {
  return eb.or(columns.map(([column, value]) => eb(column as 'name', 'is distinct from', value as string)));
}

/** The row and whether the values differ from it; for a write with no columns, `differs` is false. */
function currentStatement(
  db: Database,
  table: ResourceTable,
  columns: Array<[string, unknown]>,
  accountId: number,
  id: number,
) {
  return db
    .selectFrom(table)
    .selectAll()
    .select((eb) => (columns.length > 0 ? differs(eb, columns) : eb.lit(false)).as('differs'))
    .where('account_id', '=', accountId)
    .where('id', '=', id);
}

type Row = Record<string, unknown>;
interface UpdateStatements {
  updateIfDifferent(db: Database, accountId: number, id: number, updatedAt: string): Promise<Row[]>;
  current(db: Database, accountId: number, id: number): Promise<Array<Row & { differs: unknown }>>;
}

/** Up to this many versions in an If-Match, an update's statements are compiled once for their shape. */
const COMPILED_VERSIONS = 4;
type Value = number | string;

/**
 * An update's two usual statements. Compiled once per shape (table, columns, how many versions: server/db/
 * precompiled.ts) where every value is text or a number, as a PATCH's are; built each time otherwise (a null).
 */
function updateStatements(
  table: ResourceTable,
  columns: Array<[string, unknown]>,
  expected: ExpectedVersions,
): UpdateStatements {
  const values = columns.map(([, value]) => value);
  const versions = expected === 'any' ? [] : [...expected];
  const compilable =
    versions.length <= COMPILED_VERSIONS && values.every((v) => typeof v === 'string' || typeof v === 'number');
  if (!compilable) {
    return {
      updateIfDifferent: (db, accountId, id, updatedAt) =>
        updateStatement(db, table, columns, expected, accountId, id, updatedAt, true).returningAll().execute(),
      current: (db, accountId, id) =>
        currentStatement(db, table, columns, accountId, id).execute() as Promise<Array<Row & { differs: unknown }>>,
    };
  }
  const shape = `${table} ${columns.map(([column]) => column).join(',')} ${expected === 'any' ? 'any' : versions.length}`;
  const n = columns.length;
  // Each statement's arguments: the values, then the account, the id, [the time, then the versions].
  const named = (args: Value[]) => columns.map(([column], i) => [column, args[i]] as [string, unknown]);
  const versionsOf = (args: Value[]): ExpectedVersions =>
    expected === 'any' ? 'any' : (args.slice(n + 3) as number[]);
  const update = precompiledShape(`update ${shape}`, (db, ...args: Value[]) =>
    updateStatement(
      db,
      table,
      named(args),
      versionsOf(args),
      args[n] as number,
      args[n + 1] as number,
      args[n + 2] as string,
      true,
    ).returningAll(),
  );
  const current = precompiledShape(`current ${shape}`, (db, ...args: Value[]) =>
    currentStatement(db, table, named(args), args[n] as number, args[n + 1] as number),
  );
  const sent = values as Value[];
  return {
    updateIfDifferent: (db, accountId, id, updatedAt) => update(db, ...sent, accountId, id, updatedAt, ...versions),
    current: (db, accountId, id) => current(db, ...sent, accountId, id) as Promise<Array<Row & { differs: unknown }>>,
  };
}

/**
 * Deletes the record and returns it as it was; undefined when the account has no such record. Without If-Match
 * (`any`), as most deletes come, the statement is compiled once per engine (precompiled.ts).
 */
function ownedDeleter<T extends ResourceTable>(table: T) {
  const statement = (db: Database, accountId: number, id: number) =>
    db
      .deleteFrom(table as ResourceTable)
      .where('account_id', '=', accountId)
      .where('id', '=', id);
  const deleteAny = precompiledOnAny((db: Database, accountId: number, id: number) =>
    statement(db, accountId, id).returningAll(),
  );
  return async (
    db: Database,
    accountId: number,
    id: number,
    expected: ExpectedVersions,
  ): Promise<Selectable<DB[T]> | undefined> => {
    if (expected !== 'any' && expected.length === 0) return missingOrStale(db, table, accountId, id, expected);
    const [row] =
      expected === 'any'
        ? await deleteAny(db, accountId, id)
        : await statement(db, accountId, id).where('version', 'in', expected).returningAll().execute();
    return (row ?? (await missingOrStale(db, table, accountId, id, expected))) as Selectable<DB[T]> | undefined;
  };
}

/**
 * Who made a change: a request with an API key (its key id, where it has one of 12 hex digits; the client
 * address after TRUST_PROXY; its User-Agent, cut), the keys command, or the service on its own.
 */
export interface Actor {
  type: 'api_key' | 'cli' | 'system';
  keyId: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** The request behind a change and who sent it, as the event log keeps them. */
export interface ChangeCause {
  requestId: string | null;
  idempotencyKey: string | null;
  actor: Actor;
}

/** The cause of a change nobody asked for: a scheduled check, an expiry, a seed of the sandbox. */
export const SYSTEM_CAUSE: ChangeCause = {
  requestId: null,
  idempotencyKey: null,
  actor: { type: 'system', keyId: null, ip: null, userAgent: null },
};

/** The cause of a change made with the keys command (no request, no key of the API). */
export const CLI_CAUSE: ChangeCause = {
  requestId: null,
  idempotencyKey: null,
  actor: { type: 'cli', keyId: null, ip: null, userAgent: null },
};

/**
 * Where a change of a record is written, inside the change's own transaction (the event log: a rolled-back
 * change leaves no entry). Given by the resource module; this layer knows nothing of events.
 */
export type ChangeLog<R> = (
  trx: Database,
  change: {
    kind: 'created' | 'updated' | 'deleted';
    accountId: number;
    changed: Versioned<R>;
    cause: ChangeCause;
    /** An update's record as it was before it (read in the update's transaction). */
    previous?: R;
  },
) => Promise<void>;

/** Runs `work` in a transaction, or in the one `db` already is (an idempotent create's). */
export function inTransaction<T>(db: Database, work: (trx: Database) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/**
 * The reads, the update and the delete every owned resource has, with rows mapped to the resource's records;
 * each write and its entry in `log` commit together.
 */
export function ownedRecords<T extends ResourceTable, R>(
  db: Database,
  table: T,
  toRecord: (row: Selectable<DB[T]>) => R,
  log: ChangeLog<R>,
) {
  const versioned = (row: Selectable<DB[T]>): Versioned<R> => ({ record: toRecord(row), version: versionOf(row) });
  const findById = precompiled(db, (accountId: number, id: number) => byId(db, table, accountId, id));
  const lockedById = lockedOwned(table);
  const deleteById = ownedDeleter(table);
  return {
    async list(
      accountId: number,
      query: ListQuery,
    ): Promise<{ records: R[]; total: number; totalExact: boolean; next?: ListPosition }> {
      const { rows, total, totalExact = true, next } = await listPage(db, table, accountId, query);
      return { records: rows.map((row) => toRecord(row as Selectable<DB[T]>)), total, totalExact, next };
    },

    async find(accountId: number, id: number): Promise<Versioned<R> | undefined> {
      const [row] = await findById(accountId, id);
      return row && versioned(row as Selectable<DB[T]>);
    },

    /** False when the account has no such record; throws VersionMismatchError when it is at another version. */
    async remove(accountId: number, id: number, expected: ExpectedVersions, cause: ChangeCause): Promise<boolean> {
      return inTransaction(db, async (trx) => {
        const row = await deleteById(trx, accountId, id, expected);
        if (row) await log(trx, { kind: 'deleted', accountId, changed: versioned(row), cause });
        return row !== undefined;
      });
    },

    /**
     * Applies `changes` (see updateOwned); logs the change only when it changed the record (`changed`).
     * Throws VersionMismatchError when the record is not at one of the `expected` versions.
     */
    async change(
      accountId: number,
      id: number,
      changes: Updateable<DB[T]>,
      expected: ExpectedVersions,
      cause: ChangeCause,
    ): Promise<Updated<R> | undefined> {
      return inTransaction(db, async (trx) => {
        // The record before the change, for the event's previous_attributes: locked until the update, so that
        // no other write comes between what was read and what is changed (SQLite's transaction is exclusive).
        const before = await lockedById(trx, accountId, id);
        if (!before) return undefined;
        requireVersion(table, id, before, expected);
        // What the locked row already holds is no change: answered from it, without the update's two statements.
        if (holds(before, changes)) return { ...versioned(before), changed: false };
        const written = await updateOwned(trx, table, accountId, id, changes, expected);
        if (!written) return undefined;
        const after = { ...versioned(written.row), changed: written.changed };
        const previous = toRecord(before);
        if (written.changed) await log(trx, { kind: 'updated', accountId, changed: after, cause, previous });
        return after;
      });
    },

    /** Inserts a row with `insert` and logs its creation; undefined (nothing logged) when `insert` stored none. */
    async created(
      accountId: number,
      insert: (trx: Database) => Promise<Selectable<DB[T]> | undefined>,
      cause: ChangeCause,
    ): Promise<Versioned<R> | undefined> {
      return inTransaction(db, async (trx) => {
        const row = await insert(trx);
        if (!row) return undefined;
        const made = versioned(row);
        await log(trx, { kind: 'created', accountId, changed: made, cause });
        return made;
      });
    },
  };
}

/**
 * The account's record by id, locked for the transaction on PostgreSQL (SQLite's write transaction is exclusive);
 * compiled once per engine (precompiled.ts), as it runs in every update.
 */
function lockedOwned<T extends ResourceTable>(table: T) {
  const locked = precompiledOnAny((trx: Database, accountId: number, id: number) =>
    lockedForUpdate(trx, byId(trx, table, accountId, id)),
  );
  return async (trx: Database, accountId: number, id: number) =>
    (await locked(trx, accountId, id))[0] as Selectable<DB[T]> | undefined;
}

/**
 * Whether `row` holds every value of `changes` already: only text, numbers and nulls equal in JavaScript, which SQL
 * holds equal too (anything else, JSON or a bigint read as text, is left to updateOwned's statements to compare).
 */
function holds(row: object, changes: object): boolean {
  return Object.entries(changes).every(
    ([column, value]) =>
      (value === null || typeof value === 'string' || typeof value === 'number') &&
      (row as Record<string, unknown>)[column] === value,
  );
}

/** Throws VersionMismatchError unless `row` is at one of the `expected` versions. */
function requireVersion(table: ResourceTable, id: number, row: object, expected: ExpectedVersions): void {
  if (expected !== 'any' && !expected.includes(versionOf(row))) throw new VersionMismatchError(table, id);
}

/** A row's version (a number on either engine). */
export function versionOf(row: object): number {
  return Number((row as { version: unknown }).version);
}
