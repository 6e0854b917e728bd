// Table types for kysely. Timestamps are RFC 3339 strings here; a driver that returns Date is normalised
// by `toIso` in the repositories.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<string | Date, string, string>;

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
}

export interface SpacesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  name_key: string;
  color: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface DB {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  domains: DomainsTable;
  spaces: SpacesTable;
}
