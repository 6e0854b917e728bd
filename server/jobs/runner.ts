// The one runner of background work (the shape of graphile-worker's `run({ taskList })` and pg-boss's Worker).
// A job is a module's plain functions: `claim` takes up to `limit` units of due work for this process (a lease
// in their rows, so another process or instance never runs the same unit), `run` does one unit and records its
// outcome. The runner owns everything around them: how many units run at once, when to look again (woken at
// commit through db/wakeups.ts, or a slow poll for work due later: retries, scheduled checks), and one stop().
import { randomUUID } from 'node:crypto';
import type { Wakeups } from '../db/wakeups.js';
import type { Logger } from '../logger.js';

export interface Job<Unit> {
  name: string;
  /** Units of this job one process runs at once. */
  concurrency: number;
  /** The wake-up topics (db/wakeups.ts) that mean new work for this job. */
  wakeOn: readonly string[];
  /** How long to wait before looking again when nothing woke the job: for work that falls due by itself. */
  pollMs: number;
  /** Takes up to `limit` due units for this process, identified as `worker`; none when nothing is due. */
  claim(limit: number, worker: string): Promise<Unit[]>;
  /** Does one claimed unit and records its outcome (guarded by the claim). */
  run(unit: Unit, worker: string): Promise<void>;
  /** When a claim came back short for a reason of the job's own (a rate limit), how soon to look again. */
  retryInMs?(): number | undefined;
}

export interface JobRunner {
  /** Looks for work of the jobs woken by `topic` now (what a commit does through the wake-ups). */
  wake(topic: string): void;
  /** Stops claiming; resolves once the units under way have been recorded. */
  stop(): Promise<void>;
}

// biome-ignore lint/suspicious/noExplicitAny: a list of jobs of different unit types, each used only with its own.
type AnyJob = Job<any>;

export function startJobs(
  jobs: readonly AnyJob[],
  { wakeups, logger }: { wakeups: Wakeups; logger: Logger },
): JobRunner {
  const worker = randomUUID();
  let stopped = false;
  const loops = jobs.map((job) => jobLoop(job, worker, logger, () => stopped));
  const unlisten = wakeups.listen((topic) => {
    for (const loop of loops) if (topic === '*' || loop.job.wakeOn.includes(topic)) loop.look();
  });
  for (const loop of loops) loop.look();
  return {
    wake(topic) {
      for (const loop of loops) if (loop.job.wakeOn.includes(topic)) loop.look();
    },
    async stop() {
      stopped = true;
      await unlisten();
      await Promise.all(loops.map((loop) => loop.stop()));
    },
  };
}

/**
 * One job's loop: claims while there is room and runs each unit; looks again when a unit ends, a wake-up comes or
 * the poll's time is up.
 */
function jobLoop(job: AnyJob, worker: string, logger: Logger, stopped: () => boolean) {
  const inFlight = new Set<Promise<void>>();
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
    do {
      again = false;
      const room = job.concurrency - inFlight.size;
      if (room <= 0) return;
      const units = await job.claim(room, worker);
      for (const unit of units) {
        const running: Promise<void> = job
          .run(unit, worker)
          .catch((error: unknown) => {
            // Its claim runs out and the unit is taken again: a fault here is logged, not fatal.
            logger.error('background job failed to run a unit', { job: job.name, error: String(error) });
          })
          .finally(() => {
            inFlight.delete(running);
            look();
          });
        inFlight.add(running);
      }
      if (units.length === room) again = true;
    } while (again && !stopped());
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
    async stop() {
      clearTimeout(timer);
      // A claim under way may start units after this: wait for it, then for every unit.
      await claiming;
      await Promise.allSettled([...inFlight]);
    },
  };
}
