// Wake-ups at commit: code that leaves new work for the background says so inside its transaction
// (`notifyAtCommit`), and whoever listens hears it once the transaction has committed, never before (on SQLite a
// rolled-back one's topic waits for the next commit: a wake-up for nothing, harmless). One statement on both
// engines, `select pg_notify(channel, topic)`: PostgreSQL's NOTIFY, which the server delivers at commit to every
// instance's listening connection; on SQLite a function of that name that our writer connection holds until the
// driver's COMMIT (sqlite-dialect.ts's after-commit hook).
import { type Kysely, sql } from 'kysely';
import type { Logger } from '../logger.js';
import type { DB } from './schema.js';

// Kysely<DB> rather than database.ts's alias: database.ts attaches these, so this file must not import it.
type Database = Kysely<DB>;

/** The one channel every instance listens on; the payload is the topic (e.g. a job's table). */
const WAKE_CHANNEL = 'dss_jobs';

/** Listeners hear `topic` once the transaction `db` is in commits (at once, when it is in none). */
export async function notifyAtCommit(db: Database, topic: string): Promise<void> {
  await sql`select pg_notify(${WAKE_CHANNEL}, ${topic})`.execute(db);
}

type Heard = (topic: string) => void;

export interface Wakeups {
  /** Calls `heard` with each topic woken at a commit, and with `*` when some may have been missed; returns stop. */
  listen(heard: Heard): () => Promise<void>;
}

/** SQLite: the topics written in the open transaction, handed to the listeners when the driver commits. */
export class LocalWakeups implements Wakeups {
  private readonly pending = new Set<string>();
  private readonly listeners = new Set<Heard>();

  /** The writer's `pg_notify`: held until the next COMMIT (after a rollback, that wakes listeners for nothing). */
  held(topic: string): void {
    this.pending.add(topic);
  }

  /** The driver's after-commit hook. */
  committed(): void {
    if (this.pending.size === 0) return;
    const topics = [...this.pending];
    this.pending.clear();
    for (const topic of topics) for (const heard of this.listeners) heard(topic);
  }

  listen(heard: Heard): () => Promise<void> {
    this.listeners.add(heard);
    return async () => {
      this.listeners.delete(heard);
    };
  }
}

/** The longest pause between two tries to connect the listening client again. */
const MAX_RECONNECT_PAUSE_MS = 30_000;

/** What postgresWakeups needs of a pg `Client`. */
export interface ListeningClient {
  on(event: 'error' | 'end' | 'notification', listener: (...args: never[]) => void): unknown;
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<void>;
}

/**
 * PostgreSQL: one dedicated client per listener that LISTENs on WAKE_CHANNEL (a pooled connection cannot hold a
 * LISTEN), connected again after any error with a growing pause. After a reconnect every topic is woken once,
 * since notifications sent while it was away are lost.
 */
export function postgresWakeups(connect: () => ListeningClient, logger: Logger): Wakeups {
  return {
    listen(heard) {
      let stopped = false;
      let client: ReturnType<typeof connect> | undefined;
      let timer: NodeJS.Timeout | undefined;
      let pause = 250;
      const open = async (again: boolean) => {
        if (stopped) return;
        const current = connect();
        client = current;
        let lost = false;
        const retry = (error: Error) => {
          if (lost || stopped) return;
          lost = true;
          logger.warn('job wake-up listener lost its connection; reconnecting', {
            error: error.message,
            pause_ms: pause,
          });
          void current.end().catch(() => {});
          timer = setTimeout(() => void open(true), pause);
          timer.unref();
          pause = Math.min(pause * 2, MAX_RECONNECT_PAUSE_MS);
        };
        // Without an 'error' listener a lost connection would end the process.
        current.on('error', retry as never);
        current.on('end', (() => retry(new Error('connection ended'))) as never);
        current.on('notification', ((message: { channel: string; payload?: string }) => {
          if (message.channel === WAKE_CHANNEL && message.payload) heard(message.payload);
        }) as never);
        try {
          await current.connect();
          await current.query(`listen ${WAKE_CHANNEL}`);
          pause = 250;
          if (again) heard('*');
        } catch (error) {
          retry(error instanceof Error ? error : new Error(String(error)));
        }
      };
      void open(false);
      return async () => {
        stopped = true;
        clearTimeout(timer);
        await client?.end().catch(() => {});
      };
    },
  };
}

const wakeupsOfDb = new WeakMap<Database, Wakeups>();

/** Attaches a database's wake-ups (openDatabase does, for each database it opens). */
export function attachWakeups(db: Database, wakeups: Wakeups): void {
  wakeupsOfDb.set(db, wakeups);
}

/** The wake-ups of a database openDatabase opened; none (the fallback polls only) for any other. */
export function wakeupsOf(db: Database): Wakeups {
  return wakeupsOfDb.get(db) ?? { listen: () => async () => {} };
}
