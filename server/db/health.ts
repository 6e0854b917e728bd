// Whether the database can serve, for /readyz: it answers a read within a bound, and, once a write failed for
// the storage's sake (full, read-only, I/O error), the engine's probe says writes go through again. Reads keep
// working while the storage refuses writes, so a read alone would report ready while every write fails.

import { type Kysely, sql } from 'kysely';
import { DatabaseUnavailable, type FaultKind } from './faults.js';

export type Readiness = { ready: true } | { ready: false; kind: FaultKind; reason: string };

export interface StorageFault {
  kind: FaultKind;
  /** When a write last failed with it. */
  at: number;
}

/** Resolves when writes go through again; throws (DatabaseUnavailable) while they would not. */
// biome-ignore lint/suspicious/noExplicitAny: the probe runs on any schema.
export type StorageProbe = (db: Kysely<any>, fault: StorageFault) => Promise<void>;

export class DatabaseHealth {
  private fault?: StorageFault;
  private probe?: Promise<Readiness>;
  // biome-ignore lint/suspicious/noExplicitAny: the probe runs on any schema.
  private db?: Kysely<any>;

  constructor(private readonly probeStorage: StorageProbe) {}

  // biome-ignore lint/suspicious/noExplicitAny: the probe runs on any schema.
  attach(db: Kysely<any>): void {
    this.db = db;
  }

  noteStorageFault(kind: FaultKind): void {
    this.fault = { kind, at: Date.now() };
  }

  noteWritten(): void {
    this.fault = undefined;
  }

  /** The storage fault writes last met, while it stands. */
  get storageFault(): FaultKind | undefined {
    return this.fault?.kind;
  }

  /**
   * Whether the database serves, within `budgetMs` whatever it does: one probe at a time (callers in the
   * meantime share it), and a probe that takes longer is a "database-timeout" (it goes on in the background).
   */
  async readiness(budgetMs: number): Promise<Readiness> {
    this.probe ??= this.check().finally(() => {
      this.probe = undefined;
    });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<Readiness>((done) => {
      timer = setTimeout(
        () => done({ ready: false, kind: 'database-timeout', reason: `no answer within ${budgetMs} ms` }),
        budgetMs,
      );
    });
    try {
      return await Promise.race([this.probe, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async check(): Promise<Readiness> {
    const db = this.db;
    if (!db) return { ready: false, kind: 'database-unavailable', reason: 'not open' };
    try {
      // A read of the table every request reads first (its API key): a read of nothing would pass while a lock
      // held elsewhere keeps every request out.
      await db.selectFrom('api_keys').select(sql<number>`1`.as('one')).limit(1).execute();
      const fault = this.fault;
      if (fault) {
        await this.probeStorage(db, fault);
        if (this.fault === fault) this.noteWritten();
      }
      return { ready: true };
    } catch (error) {
      if (error instanceof DatabaseUnavailable) return { ready: false, kind: error.kind, reason: error.message };
      return { ready: false, kind: 'database-unavailable', reason: String(error) };
    }
  }
}
