// The one runner of background work (the shape of graphile-worker's `run({ taskList })` and pg-boss's Worker).
// A job is a module's plain functions: `claim` takes up to `limit` units of due work for this process (a lease
// in their rows, so another process or instance never runs the same unit), `run` does one unit and records its
// outcome, or returns it for `record`, which the runner calls with every unit's outcome finished meanwhile, in one
// transaction with the next claim (one write, and one commit to wait for, where there were one per unit and one
// per claim). The runner owns everything around them: how many units run at once, when to look again (woken at
// commit through db/wakeups.ts, or a slow poll for work due later: retries, scheduled checks; how soon a loop
// claims again is the database's, db/database.ts's claimPace), and one stop().
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import { claimPace, type Database } from '../db/database.js';
import type { DB } from '../db/schema.js';
import type { Wakeups } from '../db/wakeups.js';
import type { Logger } from '../logger.js';
import { traceFieldsOf } from '../tracing.js';

export interface Job<Unit, Finished = void> {
  name: string;
  /** Units of this job one process runs at once. */
  concurrency: number;
  /** The wake-up topics (db/wakeups.ts) that mean new work for this job. */
  wakeOn: readonly string[];
  /** How long to wait before looking again when nothing woke the job: for work that falls due by itself. */
  pollMs: number;
  /**
   * Takes up to `limit` due units for this process, identified as `worker`; none when nothing is due. In `trx` when
   * the runner has just recorded finished units in it (`record`): the claim sees the places they freed.
   */
  claim(limit: number, worker: string, trx?: Transaction<DB>): Promise<Unit[]>;
  /**
   * Does one claimed unit and records its outcome (guarded by the claim), or returns the outcome for `record`; the
   * unit's place is free for another once it returns.
   */
  run(unit: Unit, worker: string): Promise<Finished | undefined>;
  /**
   * Records, in `trx`, what `run` returned (each unit still under `worker`'s claim until then). The runner calls it
   * in the transaction of its next claim, or alone at stop, or one outcome per transaction when a transaction of
   * several failed. What it returns is called once `trx` has committed (what the records make known: metrics, logs).
   */
  record?(finished: readonly Finished[], trx: Transaction<DB>, worker: string): Promise<(() => void) | undefined>;
  /** A finished outcome's fields for the log line saying it could not be recorded. */
  describe?(finished: Finished): Record<string, unknown>;
  /** When a claim came back short for a reason of the job's own (a rate limit), how soon to look again. */
  retryInMs?(): number | undefined;
}

export interface JobRunner {
  /** Looks for work of the jobs woken by `topic` now (what a commit does through the wake-ups). */
  wake(topic: string): void;
  /**
   * Stops claiming at once; resolves once the units under way have been recorded, or once `deadlineMs` have passed:
   * units still running then are abandoned to their claims (another process, or this one started again, takes
   * each again once its lease runs out: at least once). Called again, it answers the first call's promise.
   */
  stop(options?: { deadlineMs?: number }): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of jobs of different unit types, each used only with its own.
export type AnyJob = Job<any, any>;

export function startJobs(
  jobs: readonly AnyJob[],
  { db, wakeups, logger }: { db: Database; wakeups: Wakeups; logger: Logger },
): JobRunner {
  const worker = randomUUID();
  let stopped = false;
  const pace = claimPace(db);
  const loops = jobs.map((job) => jobLoop(job, { db, pace, worker, logger }, () => stopped));
  const unlisten = wakeups.listen((topic) => {
    for (const loop of loops) if (topic === '*' || loop.job.wakeOn.includes(topic)) loop.look();
  });
  for (const loop of loops) loop.look();
  let stopping: Promise<void> | undefined;
  return {
    wake(topic) {
      for (const loop of loops) if (loop.job.wakeOn.includes(topic)) loop.look();
    },
    stop({ deadlineMs = Number.POSITIVE_INFINITY } = {}) {
      stopping ??= (async () => {
        const until = Date.now() + deadlineMs;
        stopped = true;
        await unlisten();
        await Promise.all(loops.map((loop) => loop.stop(until)));
      })();
      return stopping;
    },
  };
}

/** Whether `work` settled before the time `until` (Date.now() terms); it goes on either way. */
async function settledBy(work: Promise<unknown>, until: number): Promise<boolean> {
  const settled = work.then(
    () => true,
    () => true,
  );
  if (until === Number.POSITIVE_INFINITY) return settled;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()));
  });
  try {
    return await Promise.race([settled, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One job's loop: claims while there is room and runs each unit; looks again when a unit ends, a wake-up comes or
 * the poll's time is up.
 */
function jobLoop(
  job: AnyJob,
  { db, pace, worker, logger }: { db: Database; pace: () => Promise<void>; worker: string; logger: Logger },
  stopped: () => boolean,
) {
  const inFlight = new Set<Promise<void>>();
  /** Outcomes `run` returned, for `record` before the next claim. */
  let finished: unknown[] = [];
  let claiming: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const later = (ms: number) => {
    clearTimeout(timer);
    if (stopped()) return;
    timer = setTimeout(look, ms);
    timer.unref();
  };

  async function claimWhileRoom(): Promise<void> {
    for (let first = true; first || (again && !stopped()); first = false) {
      // Looking again (units finished while this claim was under way, or it filled its room): when the database
      // says (db/database.ts's claimPace), not at once.
      if (!first) await pace();
      if (stopped()) return;
      again = false;
      const room = job.concurrency - inFlight.size;
      if (room <= 0) return;
      const units = await claimRecording(room);
      for (const unit of units) {
        const running: Promise<void> = job
          .run(unit, worker)
          .then((outcome) => {
            if (outcome !== undefined && job.record) finished.push(outcome);
          })
          .catch((error: unknown) => {
            // Its claim runs out and the unit is taken again: a fault here is logged, not fatal.
            // With the ids of the unit's span, when tracing (the line is written after the span ended).
            logger.error('background job failed to run a unit', {
              job: job.name,
              error: String(error),
              ...traceFieldsOf(error),
            });
          })
          .finally(() => {
            inFlight.delete(running);
            look();
          });
        inFlight.add(running);
      }
      if (units.length === room) again = true;
    }
  }

  /**
   * A claim of up to `limit` units, after the outcomes finished so far are recorded in its transaction. When that
   * transaction fails, each outcome is recorded alone (one that cannot be written does not hold back the others),
   * and nothing is claimed until the next look; one that still fails is left to its claim (its unit is done again
   * once the lease runs out: at least once).
   */
  async function claimRecording(limit: number): Promise<unknown[]> {
    const recording = finished;
    finished = [];
    const { record } = job;
    if (!record || recording.length === 0) return limit > 0 ? job.claim(limit, worker) : [];
    try {
      const { recorded, claimed } = await db.transaction().execute(async (trx) => ({
        recorded: await record(recording, trx, worker),
        claimed: limit > 0 ? ((await job.claim(limit, worker, trx)) as unknown[]) : [],
      }));
      recorded?.();
      return claimed;
    } catch (error) {
      logger.warn('background job recording one by one', {
        job: job.name,
        units: recording.length,
        error: String(error),
      });
      for (const one of recording) {
        try {
          (await db.transaction().execute((trx) => record([one], trx, worker)))?.();
        } catch (recordError) {
          logger.error('background job could not record a unit: left to its claim', {
            job: job.name,
            ...job.describe?.(one),
            error: String(recordError),
          });
        }
      }
      return [];
    }
  }

  function look(): void {
    if (stopped()) return;
    if (claiming) {
      again = true;
      return;
    }
    claiming = claimWhileRoom()
      .catch((error: unknown) => {
        // The database is away (a restart, a failover): the poll tries again.
        logger.warn('background job could not claim work', { job: job.name, error: String(error) });
      })
      .finally(() => {
        claiming = undefined;
        const soon = job.retryInMs?.();
        later(soon === undefined ? job.pollMs : Math.min(soon, job.pollMs));
      });
  }

  return {
    job,
    look,
    /** Stops by the time `until` (Date.now() terms); what is still running then is left to its claims. */
    async stop(until: number) {
      clearTimeout(timer);
      // A claim under way may start units after this: wait for it, then for every unit.
      const inTime =
        (await settledBy(claiming ?? Promise.resolve(), until)) &&
        (await settledBy(Promise.allSettled([...inFlight]), until));
      if (!inTime) {
        logger.warn('background job stopped with units still running: each is taken again once its claim runs out', {
          job: job.name,
          running: inFlight.size,
        });
      }
      // What the last units left to record: recorded now, or (the database away, the time up) their claims run out
      // and they are done again by whichever process claims them next.
      if (finished.length > 0) {
        const recorded = claimRecording(0).catch((error: unknown) => {
          logger.error('background job could not record its last units', { job: job.name, error: String(error) });
        });
        if (!(await settledBy(recorded, until))) {
          logger.warn('background job stopped before its last units were recorded', { job: job.name });
        }
      }
    },
  };
}
