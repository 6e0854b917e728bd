// The service's background work, as the runner's list of jobs: webhook deliveries, scheduled domain checks (when
// the configuration runs them) and retention. main.ts starts them once per serving process.
import type { Database } from '../db/database.js';
import type { DomainChecks } from '../domains/checks.js';
import { domainCheckJob, type SchedulerSettings } from '../domains/scheduler.js';
import type { Logger } from '../logger.js';
import { type DeliveryObserver, deliveryJob } from '../webhooks/deliveries.js';
import { webhookFanOut } from '../webhooks/fan-out.js';
import type { WebhookSettings } from '../webhooks/settings.js';
import { retainedTables, retentionJob } from './retention.js';
import type { Job } from './runner.js';

export interface BackgroundSettings {
  webhooks: WebhookSettings;
  /** Scheduled checks, or none (DOMAIN_SCHEDULER=0). */
  checks?: { domainChecks: DomainChecks; scheduler: SchedulerSettings };
  logger: Logger;
  observer?: DeliveryObserver;
  /** How often retention looks for rows past their time (the default: RETENTION_EVERY_MS). */
  retentionEveryMs?: number;
}

// biome-ignore lint/suspicious/noExplicitAny: jobs of different unit types, each run only with its own units.
export function backgroundJobs(db: Database, settings: BackgroundSettings): Job<any>[] {
  const { webhooks, checks, logger, observer, retentionEveryMs } = settings;
  return [
    deliveryJob(db, webhooks, { logger, ...(observer ? { observer } : {}) }),
    ...(checks ? [domainCheckJob(db, checks.domainChecks, checks.scheduler, webhookFanOut(webhooks))] : []),
    retentionJob(db, retainedTables(webhooks.eventRetentionMs), { logger, everyMs: retentionEveryMs }),
  ];
}
