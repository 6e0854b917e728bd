// What the baselines run: the service's SQL for each benchmarked request, on better-sqlite3 directly with
// statements prepared once — the key lookup by public id with a SHA-256 compare, then the row query; a write, as
// in the service, in one immediate transaction with its event (the outbox row every webhook is sent from) and
// the account's webhook endpoints read to queue it. Nothing else.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type SQLite from 'better-sqlite3';
import { sqliteDriver } from '../../server/db/sqlite-driver.js';
import { etagOf } from '../../server/http/conventions/conditional.js';
import { ApiSpec, type Schema } from '../../server/spec-model.js';

const KEY = /^Bearer +dss_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export interface ListParams {
  search: string;
  sortBy: 'id' | 'name';
  sort: 'asc' | 'desc';
  page: number;
  perPage: number;
}

type Row = Record<string, unknown>;

/**
 * A space's fields as the spec's `space` schema lists them, integers read as numbers: a field the spec adds is
 * answered by the peers as the service answers it (test/spec/bench-peers.test.ts holds them to the service).
 */
const SPACE_FIELDS = (() => {
  const spec = ApiSpec.load();
  const schemas = (spec.document.components as { schemas: Record<string, Schema> }).schemas;
  const properties = (spec.resolve(schemas.space) as Schema).properties as Record<string, Schema>;
  return Object.entries(properties).map(([name, schema]) => ({
    name,
    integer: (spec.resolve(schema) as Schema).type === 'integer',
    // An object field (metadata) is stored as JSON text.
    json: (spec.resolve(schema) as Schema).type === 'object',
  }));
})();

/** A row of `spaces` as the service answers it. */
export function spaceRecord(row: Row): Row {
  return Object.fromEntries(
    SPACE_FIELDS.map(({ name, integer, json }) => [
      name,
      integer ? Number(row[name]) : json ? JSON.parse(String(row[name])) : (row[name] ?? null),
    ]),
  );
}

export function sameSql(file: string) {
  const db = new (sqliteDriver())(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  const keyRow = db.prepare(
    `select accounts.id as account_id, secret_hash, revoked_at from api_keys
     inner join accounts on accounts.id = api_keys.account_id where public_id = ?`,
  );
  const show = db.prepare('select * from spaces where account_id = ? and id = ?');
  const insert = db.prepare(
    `insert into spaces (name, color, account_id, name_key, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?) returning *`,
  );
  // As the service's updateOwned: the write applies only where a value differs; otherwise the row is read.
  const update = db.prepare(
    `update spaces set name = coalesce(@name, name), name_key = coalesce(@nameKey, name_key),
     color = coalesce(@color, color), updated_at = @now, version = version + 1
     where account_id = @accountId and id = @id
     and (name is distinct from coalesce(@name, name) or color is distinct from coalesce(@color, color)) returning *`,
  );

  const event = db.prepare(
    'insert into events (public_id, account_id, type, created_at, payload) values (?, ?, ?, ?, ?) returning id',
  );
  const endpoints = db.prepare(
    `select id, enabled_events from webhook_endpoints where account_id = ? and status = 'enabled'`,
  );
  /** The event of a change, as server/events/outbox.ts writes it (no endpoint in the benchmark's accounts). */
  const logChange = (accountId: number, type: string, row: Row, etag: string) => {
    const publicId = `evt_${randomBytes(12).toString('hex')}`;
    const timestamp = new Date().toISOString();
    const object = spaceRecord(row);
    const cause = { request_id: null, idempotency_key: null };
    const payload = JSON.stringify({ id: publicId, type, timestamp, data: { object, etag }, cause });
    event.get(publicId, accountId, type, timestamp, payload);
    endpoints.all(accountId);
  };
  const storeSpace = db.transaction((accountId: number, name: string, color: number) => {
    const now = new Date().toISOString();
    const row = insert.get(name, color, accountId, fold(name), now, now) as Row;
    logChange(accountId, 'space.created', row, etagOf(Number(row.id), Number(row.version)));
    return row;
  });
  // As the service's deleteOwned: the row goes, and its event is written in the same transaction.
  const remove = db.prepare('delete from spaces where account_id = ? and id = ? returning *');
  const deleteSpace = db.transaction((accountId: number, id: number) => {
    const row = remove.get(accountId, id) as Row | undefined;
    if (row) logChange(accountId, 'space.deleted', row, etagOf(Number(row.id), Number(row.version)));
    return row;
  });
  // The event log as the service reads it for a key that may read every record: newest first, below a cursor's id.
  const events = db.prepare(
    'select id, public_id, type, payload from events where account_id = ? order by id desc limit ?',
  );
  const eventsBefore = db.prepare(
    'select id, public_id, type, payload from events where account_id = ? and id < ? order by id desc limit ?',
  );
  const updateSpace = db.transaction(
    (accountId: number, id: number, name: string | undefined, color: number | undefined) => {
      const now = new Date().toISOString();
      const nameKey = name === undefined ? null : fold(name);
      const written = update.get({ name: name ?? null, nameKey, color: color ?? null, now, accountId, id }) as
        | Row
        | undefined;
      if (!written) return show.get(accountId, id) as Row | undefined;
      logChange(accountId, 'space.updated', written, etagOf(Number(written.id), Number(written.version)));
      return written;
    },
  );
  // An unfiltered list's total is the count the triggers keep (migration 0004), as in the service.
  const counted = db.prepare(`select total from record_counts where account_id = ? and resource = 'spaces'`);
  const listStatements = new Map<string, { count: SQLite.Statement; rows: SQLite.Statement }>();
  const listStatement = (params: ListParams) => {
    const filter = `account_id = ?${params.search ? ` and name_key like ? escape '\\'` : ''}`;
    const order = `${params.sortBy === 'name' ? `name_key ${params.sort}, ` : ''}id ${params.sort}`;
    const key = `${filter}|${order}`;
    let statements = listStatements.get(key);
    if (!statements) {
      statements = {
        count: db.prepare(`select count(*) as total from spaces where ${filter}`),
        rows: db.prepare(`select * from spaces where ${filter} order by ${order} limit ? offset ?`),
      };
      listStatements.set(key, statements);
    }
    return statements;
  };
  const fold = (text: string) => text.normalize('NFKC').toUpperCase().toLowerCase().normalize('NFKC');

  return {
    /** The account id of a valid, unrevoked key in an Authorization header, or undefined. */
    authenticate(header: string | undefined): number | undefined {
      const match = header ? KEY.exec(header) : null;
      if (!match) return undefined;
      const row = keyRow.get(match[1]) as { account_id: number; secret_hash: string; revoked_at: unknown } | undefined;
      const hash = createHash('sha256')
        .update(match[2] as string)
        .digest();
      const matches = timingSafeEqual(hash, row ? Buffer.from(row.secret_hash, 'hex') : Buffer.alloc(32));
      return row && matches && row.revoked_at === null ? row.account_id : undefined;
    },
    show: (accountId: number, id: number) => show.get(accountId, id) as Row | undefined,
    list(accountId: number, params: ListParams) {
      const { rows, total } = this.listRows(accountId, params);
      const lastPage = Math.max(1, Math.ceil(total / params.perPage));
      return {
        data: rows,
        links: {
          first: '?page=1',
          last: `?page=${lastPage}`,
          prev: null,
          next: params.page < lastPage ? '?page=2' : null,
        },
        meta: { current_page: params.page, last_page: lastPage, per_page: params.perPage, total },
      };
    },
    /** One page of the account's spaces and the total, by the service's SQL for a small account. */
    listRows(accountId: number, params: ListParams): { rows: Row[]; total: number } {
      const statements = listStatement(params);
      const args: unknown[] = [accountId];
      if (params.search) args.push(`%${fold(params.search).replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      const total = params.search
        ? (statements.count.get(...args) as { total: number }).total
        : ((counted.get(accountId) as { total: number } | undefined)?.total ?? 0);
      const offset = (params.page - 1) * params.perPage;
      const rows = offset >= total ? [] : (statements.rows.all(...args, params.perPage, offset) as Row[]);
      return { rows, total };
    },
    store: (accountId: number, name: string, color: number) => storeSpace.immediate(accountId, name, color) as Row,
    update: (accountId: number, id: number, name: string | undefined, color: number | undefined) =>
      updateSpace.immediate(accountId, id, name, color) as Row | undefined,
    /** The deleted row, or undefined when the account has no such space. */
    delete: (accountId: number, id: number) => deleteSpace.immediate(accountId, id) as Row | undefined,
    /** A page of the account's events, newest first, below id `before` when given. */
    events: (accountId: number, limit: number, before?: number) =>
      (before === undefined ? events.all(accountId, limit) : eventsBefore.all(accountId, before, limit)) as Array<{
        id: number;
        payload: string;
      }>,
  };
}

/** The list parameters from a query string, with the spec's defaults. */
export function listParams(query: URLSearchParams): ListParams {
  return {
    search: query.get('search') ?? '',
    sortBy: query.get('sort_by') === 'name' ? 'name' : 'id',
    sort: query.get('sort') === 'asc' ? 'asc' : 'desc',
    page: Number(query.get('page') ?? 1),
    perPage: Number(query.get('per_page') ?? 10),
  };
}
