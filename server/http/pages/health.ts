// Liveness and readiness, for a supervisor and a load balancer. /healthz says the process answers (and which
// release it runs) and never touches the database. /readyz says whether to send traffic here: 503 while draining, and while the database
// does not serve (no answer in time, or writes refused by full or read-only storage); it answers within a second
// whatever the database does.
import type { RequestHandler } from 'express';
import { buildInfo } from '../../build-info.js';
import { type Database, healthOf } from '../../db/database.js';
import { FAULTS } from '../../db/faults.js';
import type { Logger } from '../../logger.js';
import { HttpProblem } from '../problems/problem.js';

/** How long /readyz waits for the database before it answers 503: a load balancer's probe gets its answer in time. */
export const READINESS_BUDGET_MS = 500;

/** Which release answers (the version and the commit: build-info.ts), beside the status. */
export const healthz: RequestHandler = (_req, res) => {
  res.json({ status: 'ok', ...buildInfo() });
};

export function readyz(db: Database, isDraining: () => boolean, logger: Logger): RequestHandler {
  const health = healthOf(db);
  // Logged when it changes, not at every probe of a load balancer.
  let wasReady = true;
  return async (_req, res) => {
    if (isDraining()) throw new HttpProblem('draining', 'The service is shutting down.');
    const readiness = await health.readiness(READINESS_BUDGET_MS);
    if (readiness.ready !== wasReady) {
      wasReady = readiness.ready;
      if (readiness.ready) logger.info('ready: the database serves again');
      else logger.warn('not ready', { kind: readiness.kind, reason: readiness.reason });
    }
    if (!readiness.ready) {
      const { detail, retryAfterSeconds } = FAULTS[readiness.kind];
      throw new HttpProblem(readiness.kind, detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });
    }
    res.json({ status: 'ready' });
  };
}
