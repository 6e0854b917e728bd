// WORKERS=<n>: the service as n processes on one port (node:cluster). The primary migrates the database and
// issues the first key once, then forks; workers only serve. The primary stands in for the HTTP server in
// main.ts: it is "listening" once every worker listens, and close() stops the workers (SIGTERM) and calls
// back when all have exited. A worker that dies unexpectedly is replaced, with a backoff that grows while
// workers keep dying.
import cluster, { type Worker } from 'node:cluster';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import type { Logger } from './logger.js';

export const isWorker = cluster.isWorker;

/** WORKERS as a number of processes: a positive integer, or `auto` (one per core). */
export function parseWorkers(value: string): number | { error: string } {
  if (value === 'auto') return availableParallelism();
  if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= 256) return Number(value);
  return { error: `WORKERS must be an integer from 1 to 256 or "auto" (got "${value}")` };
}

const FIRST_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 10_000;
/** A worker that lived this long counts as healthy: the next one that dies is replaced at once again. */
const HEALTHY_AFTER_MS = 30_000;

/** Forks `count` workers that run this same entry point; returns the stand-in for their server. */
export function forkWorkers(count: number, logger: Logger) {
  const pool = new EventEmitter() as EventEmitter & {
    address(): AddressInfo | null;
    close(callback: () => void): void;
    closeIdleConnections(): void;
  };
  const started = new Map<Worker, number>();
  let address: AddressInfo | null = null;
  let listening = 0;
  let stopping = false;
  let backoff = FIRST_BACKOFF_MS;

  // The kernel hands each connection to a worker (SCHED_NONE), not the primary: with round-robin the primary
  // accepts and passes every socket on, keeping its own copy until the worker says it took it, and a worker that
  // died meanwhile left that copy open for ever (the client hung; CLOSE-WAIT once it gave up). Now a dead
  // worker's connections close with it, and the ones it had not accepted are taken by the others.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const fork = () => {
    const worker = cluster.fork();
    started.set(worker, Date.now());
    worker.once('listening', (where) => {
      address ??= { address: where.address ?? '', family: where.addressType === 6 ? 'IPv6' : 'IPv4', port: where.port };
      listening++;
      if (listening === count) pool.emit('listening');
    });
    worker.once('exit', (code, signal) => {
      const lived = Date.now() - (started.get(worker) ?? 0);
      started.delete(worker);
      if (stopping) {
        if (started.size === 0) pool.emit('all-exited');
        return;
      }
      if (listening < count) {
        // Dying before the service is up is a start-up failure (port taken, bad database): give up.
        stopAll();
        pool.emit('error', new Error(`a worker exited before listening (${signal ?? `code ${code}`})`));
        return;
      }
      backoff = lived >= HEALTHY_AFTER_MS ? FIRST_BACKOFF_MS : Math.min(backoff * 2, MAX_BACKOFF_MS);
      logger.error('worker exited unexpectedly; starting another', {
        pid: worker.process.pid,
        code,
        signal,
        restart_in_ms: backoff,
      });
      setTimeout(() => {
        if (!stopping) fork();
      }, backoff);
    });
  };

  const stopAll = () => {
    stopping = true;
    for (const worker of started.keys()) worker.process.kill('SIGTERM');
  };

  pool.address = () => address;
  pool.close = (callback) => {
    if (started.size === 0) return callback();
    pool.once('all-exited', callback);
    stopAll();
  };
  pool.closeIdleConnections = () => {};
  for (let i = 0; i < count; i++) fork();
  logger.info('forked workers', { workers: count });
  return pool;
}
