// What a database's schema is, read from the engine's own catalog, and what of a schema change an instance of the
// previous release could not live with (scripts/deploy/OPERATIONS.md, "Upgrades and migrations"): during a
// rolling upgrade, and after a rollback, the previous release runs on the schema the new one migrated to.
import { type Kysely, sql } from 'kysely';

export interface Column {
  type: string;
  notNull: boolean;
  /** The default's expression; generated columns count as having one. */
  default: string | null;
}

export interface Schema {
  /** Table name to its columns. */
  tables: Record<string, Record<string, Column>>;
  /** Per table, its indexes (unique constraints and primary keys too) by definition, whatever their names. */
  indexes: Record<string, { definition: string; unique: boolean }[]>;
  /** Per table, its CHECK constraints' expressions. */
  checks: Record<string, string[]>;
  /** Per table, its foreign keys: columns, the table referenced, and the action on delete. */
  foreignKeys: Record<string, { columns: string; references: string; onDelete: string }[]>;
  /** Per table, its triggers' definitions. */
  triggers: Record<string, string[]>;
}

/** kysely's own tables, which no release reads as data. */
const INTERNAL = /^(kysely_migration|kysely_migration_lock|sqlite_.*)$/;

const normal = (text: string) =>
  text
    .replace(/["`]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/\s*([(),])\s*/g, '$1')
    .trim()
    .toLowerCase();

// biome-ignore lint/suspicious/noExplicitAny: reads any schema, through the engine's catalog.
export async function schemaOf(db: Kysely<any>, engine: 'sqlite' | 'postgres'): Promise<Schema> {
  return engine === 'sqlite' ? sqliteSchema(db) : postgresSchema(db);
}

function group<T>(rows: { table: string; value: T }[]): Record<string, T[]> {
  const out: Record<string, T[]> = {};
  for (const row of rows) {
    out[row.table] ??= [];
    out[row.table]?.push(row.value);
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: see schemaOf.
async function sqliteSchema(db: Kysely<any>): Promise<Schema> {
  const query = async <T>(text: string) => (await sql.raw<T>(text).execute(db)).rows;
  const objects = await query<{ type: string; name: string; tbl_name: string; sql: string | null }>(
    "select type, name, tbl_name, sql from sqlite_master where type in ('table', 'index', 'trigger')",
  );
  const tables = objects.filter((o) => o.type === 'table' && !INTERNAL.test(o.name));
  const schema: Schema = { tables: {}, indexes: {}, checks: {}, foreignKeys: {}, triggers: {} };
  for (const table of tables) {
    const name = table.name;
    const columns = await query<{
      name: string;
      type: string;
      notnull: number;
      dflt_value: string | null;
      hidden: number;
    }>(`select * from pragma_table_xinfo('${name}')`);
    schema.tables[name] = Object.fromEntries(
      columns.map((c) => [
        c.name,
        {
          type: c.type.toLowerCase(),
          notNull: c.notnull === 1,
          default: c.hidden >= 2 ? 'generated' : c.dflt_value,
        },
      ]),
    );
    const indexes = await query<{ name: string; unique: number; origin: string }>(
      `select * from pragma_index_list('${name}')`,
    );
    schema.indexes[name] = [];
    for (const index of indexes) {
      const created = objects.find((o) => o.type === 'index' && o.name === index.name)?.sql;
      const parts = await query<{ name: string | null }>(`select name from pragma_index_info('${index.name}')`);
      // An index made by CREATE INDEX by its statement without its name (its columns, expressions and WHERE);
      // one a constraint made by its columns.
      const definition = created
        ? normal(created.replace(/^\s*create\s+(unique\s+)?index\s+(if\s+not\s+exists\s+)?\S+\s+on\s+/i, ''))
        : `${name}(${parts.map((p) => p.name ?? 'expr').join(',')})`;
      schema.indexes[name].push({ definition, unique: index.unique === 1 });
    }
    schema.checks[name] = checksIn(table.sql ?? '');
    const keys = await query<{ id: number; table: string; from: string; on_delete: string }>(
      `select * from pragma_foreign_key_list('${name}')`,
    );
    const byId = group(keys.map((k) => ({ table: String(k.id), value: k })));
    schema.foreignKeys[name] = Object.values(byId).map((parts) => ({
      columns: parts.map((p) => p.from).join(','),
      references: (parts[0] as { table: string }).table,
      onDelete: (parts[0] as { on_delete: string }).on_delete.toLowerCase(),
    }));
    schema.triggers[name] = objects
      .filter((o) => o.type === 'trigger' && o.tbl_name === name)
      .map((o) => normal(o.sql ?? ''));
  }
  return schema;
}

/** The CHECK constraints' expressions in a CREATE TABLE statement (parentheses balanced). */
function checksIn(createTable: string): string[] {
  const checks: string[] = [];
  const pattern = /\bcheck\s*\(/gi;
  for (let match = pattern.exec(createTable); match; match = pattern.exec(createTable)) {
    let depth = 1;
    let i = pattern.lastIndex;
    for (; i < createTable.length && depth > 0; i++) {
      if (createTable[i] === '(') depth++;
      else if (createTable[i] === ')') depth--;
    }
    checks.push(normal(createTable.slice(pattern.lastIndex, i - 1)));
  }
  return checks;
}

// biome-ignore lint/suspicious/noExplicitAny: see schemaOf.
async function postgresSchema(db: Kysely<any>): Promise<Schema> {
  const query = async <T>(text: string) => (await sql.raw<T>(text).execute(db)).rows;
  const columns = await query<{
    table_name: string;
    column_name: string;
    type: string;
    is_nullable: string;
    column_default: string | null;
    is_generated: string;
  }>(
    `select c.table_name, c.column_name, format_type(a.atttypid, a.atttypmod) as type, c.is_nullable,
            c.column_default, c.is_generated
       from information_schema.columns c
       join pg_attribute a on a.attrelid = (quote_ident(c.table_schema) || '.' || quote_ident(c.table_name))::regclass
                          and a.attname = c.column_name
      where c.table_schema = current_schema()`,
  );
  const schema: Schema = { tables: {}, indexes: {}, checks: {}, foreignKeys: {}, triggers: {} };
  for (const c of columns) {
    if (INTERNAL.test(c.table_name)) continue;
    schema.tables[c.table_name] ??= {};
    (schema.tables[c.table_name] as Record<string, Column>)[c.column_name] = {
      type: c.type,
      notNull: c.is_nullable === 'NO',
      default: c.is_generated === 'ALWAYS' ? 'generated' : c.column_default,
    };
  }
  const known = (table: string) => table in schema.tables;
  const indexes = await query<{ tablename: string; indexdef: string }>(
    'select tablename, indexdef from pg_indexes where schemaname = current_schema()',
  );
  schema.indexes = group(
    indexes
      .filter((i) => known(i.tablename))
      .map((i) => ({
        table: i.tablename,
        value: {
          definition: normal(i.indexdef.replace(/^create\s+(unique\s+)?index\s+\S+\s+on\s+(only\s+)?(\S+\.)?/i, '')),
          unique: /^create\s+unique\s/i.test(i.indexdef),
        },
      })),
  );
  const constraints = await query<{ table: string; type: string; definition: string; referenced: string | null }>(
    `select c.conrelid::regclass::text as table, c.contype as type, pg_get_constraintdef(c.oid) as definition,
            c.confrelid::regclass::text as referenced
       from pg_constraint c join pg_namespace n on n.oid = c.connamespace
      where n.nspname = current_schema() and c.contype in ('c', 'f')`,
  );
  schema.checks = group(
    constraints
      .filter((c) => c.type === 'c' && known(c.table))
      .map((c) => ({ table: c.table, value: normal(c.definition.replace(/^check\s*/i, '')) })),
  );
  schema.foreignKeys = group(
    constraints
      .filter((c) => c.type === 'f' && known(c.table))
      .map((c) => ({
        table: c.table,
        value: {
          columns: normal(/^foreign key\s*\(([^)]*)\)/i.exec(c.definition)?.[1] ?? c.definition),
          references: c.referenced ?? '',
          onDelete: normal(
            /on delete (cascade|set null|set default|restrict|no action)/i.exec(c.definition)?.[1] ?? 'no action',
          ),
        },
      })),
  );
  const triggers = await query<{ table: string; definition: string }>(
    `select t.tgrelid::regclass::text as table, pg_get_triggerdef(t.oid) as definition
       from pg_trigger t join pg_class r on r.oid = t.tgrelid join pg_namespace n on n.oid = r.relnamespace
      where n.nspname = current_schema() and not t.tgisinternal`,
  );
  schema.triggers = group(
    triggers
      .filter((t) => known(t.table))
      .map((t) => ({ table: t.table, value: normal(t.definition.replace(/^create\s+trigger\s+\S+\s+/i, '')) })),
  );
  return schema;
}

export interface Finding {
  /** What the previous release could not live with; empty for a note that fails nothing. */
  unsafe: boolean;
  message: string;
}

/**
 * Each change from `before` (the previous release's migrations applied) to `after` (the checkout's applied on top)
 * that an instance of the previous release cannot run on: a table, column, index, trigger or foreign key it
 * knows gone or changed (a rename is a drop), a column of its tables retyped or its NULL rule or default changed,
 * a new NOT NULL column without a default on its tables (its inserts leave it out), a new uniqueness rule, CHECK
 * constraint or foreign key on its tables (its writes may then fail), and a new table's foreign key onto its tables
 * that neither cascades nor sets null (its deletes would fail). A new trigger on its tables is noted, not failed.
 */
export function upgradeFindings(before: Schema, after: Schema): Finding[] {
  const findings: Finding[] = [];
  const unsafe = (message: string) => findings.push({ unsafe: true, message });
  const list = <T>(record: Record<string, T[]>, table: string) => record[table] ?? [];
  for (const [table, columns] of Object.entries(before.tables)) {
    const now = after.tables[table];
    if (!now) {
      unsafe(`table ${table} was dropped or renamed: the previous release reads and writes it`);
      continue;
    }
    for (const [name, column] of Object.entries(columns)) {
      const next = now[name];
      if (!next) unsafe(`column ${table}.${name} was dropped or renamed: the previous release reads it`);
      else {
        if (next.type !== column.type) unsafe(`column ${table}.${name} was retyped (${column.type} to ${next.type})`);
        if (next.notNull !== column.notNull) {
          unsafe(
            next.notNull
              ? `column ${table}.${name} became NOT NULL: the previous release's writes may leave it null`
              : `column ${table}.${name} may now be null: the previous release reads it as never null`,
          );
        }
        if (next.default !== column.default) {
          unsafe(`column ${table}.${name}'s default changed (${column.default} to ${next.default})`);
        }
      }
    }
    for (const [name, column] of Object.entries(now)) {
      if (!(name in columns) && column.notNull && column.default === null) {
        unsafe(
          `new column ${table}.${name} is NOT NULL without a default: the previous release's inserts leave it out`,
        );
      }
    }
    const indexesNow = list(after.indexes, table);
    const indexesBefore = list(before.indexes, table);
    for (const index of indexesBefore) {
      if (!indexesNow.some((i) => i.definition === index.definition && i.unique === index.unique)) {
        unsafe(
          `${index.unique ? 'unique ' : ''}index ${index.definition} was dropped or changed: the previous ` +
            `release's queries${index.unique ? ' (and its ON CONFLICT targets)' : ''} rely on it`,
        );
      }
    }
    for (const index of indexesNow) {
      if (index.unique && !indexesBefore.some((i) => i.definition === index.definition && i.unique)) {
        unsafe(`new unique index ${index.definition}: the previous release's writes to ${table} may break it`);
      }
    }
    for (const check of list(before.checks, table)) {
      if (!list(after.checks, table).includes(check)) unsafe(`CHECK (${check}) on ${table} was dropped or changed`);
    }
    for (const check of list(after.checks, table)) {
      if (!list(before.checks, table).includes(check)) {
        unsafe(`new CHECK (${check}) on ${table}: the previous release's writes may break it`);
      }
    }
    const same = (a: { columns: string; references: string; onDelete: string }) => (b: typeof a) =>
      a.columns === b.columns && a.references === b.references && a.onDelete === b.onDelete;
    for (const key of list(before.foreignKeys, table)) {
      if (!list(after.foreignKeys, table).some(same(key))) {
        unsafe(`foreign key ${table}(${key.columns}) to ${key.references} was dropped or changed`);
      }
    }
    for (const key of list(after.foreignKeys, table)) {
      if (!list(before.foreignKeys, table).some(same(key)) && key.columns.split(',').some((c) => c in columns)) {
        unsafe(
          `new foreign key ${table}(${key.columns}) to ${key.references}: the previous release's writes may break it`,
        );
      }
    }
    for (const trigger of list(before.triggers, table)) {
      if (!list(after.triggers, table).includes(trigger)) {
        unsafe(`a trigger on ${table} was dropped or changed: ${trigger}`);
      }
    }
    for (const trigger of list(after.triggers, table)) {
      if (!list(before.triggers, table).includes(trigger)) {
        findings.push({
          unsafe: false,
          message: `new trigger on ${table} (runs for the previous release's writes too): ${trigger}`,
        });
      }
    }
  }
  for (const [table, keys] of Object.entries(after.foreignKeys)) {
    for (const key of keys) {
      if (key.references in before.tables && !['cascade', 'set null'].includes(key.onDelete)) {
        if (table in before.tables && list(before.foreignKeys, table).some((k) => k.columns === key.columns)) continue;
        unsafe(
          `foreign key ${table}(${key.columns}) to ${key.references} is ON DELETE ${key.onDelete}: the previous ` +
            `release deletes from ${key.references} without knowing ${table}; use ON DELETE CASCADE or SET NULL`,
        );
      }
    }
  }
  return findings;
}
