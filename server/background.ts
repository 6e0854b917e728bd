// The service's background work, as the runner's list of jobs: webhook deliveries, scheduled domain checks (when
// the configuration runs them), retention and the events of keys that expired. main.ts starts them once per serving process.
import { keyExpiryJob } from './accounts/key-expiry.js';
import type { Database } from './db/database.js';
import { DEFAULT_VERIFY_QUOTA, type DomainChecks } from './domains/checks.js';
import { domainCheckJob, type SchedulerSettings } from './domains/scheduler.js';
import { DEFAULT_EVENT_SETTINGS, type EventSettings } from './events/settings.js';
import type { AnyJob } from './jobs/runner.js';
import type { Logger } from './logger.js';
import { retainedTables, retentionJob } from './retention.js';
import { type DeliveryObserver, deliveryJob } from './webhooks/deliveries.js';
import { webhookFanOut } from './webhooks/fan-out.js';
import { recoveryJob } from './webhooks/recoveries.js';
import type { WebhookSettings } from './webhooks/settings.js';

export interface BackgroundSettings {
  webhooks: WebhookSettings;
  events?: EventSettings;
  domainChecks: DomainChecks;
  /** Scheduled checks' pace, or none (DOMAIN_CHECKS=off). */
  scheduler?: SchedulerSettings;
  logger: Logger;
  observer?: DeliveryObserver;
  /** Counts the rows retention deleted (background-metrics.ts). */
  pruned?: (table: string, count: number) => void;
  /** How often retention looks for rows past their time (the default: RETENTION_EVERY_MS). */
  retentionEveryMs?: number;
}

export function backgroundJobs(db: Database, settings: BackgroundSettings): AnyJob[] {
  const {
    webhooks,
    events = DEFAULT_EVENT_SETTINGS,
    domainChecks,
    scheduler,
    logger,
    observer,
    pruned,
    retentionEveryMs,
  } = settings;
  const verifyWindowMs = (domainChecks.verifyQuota ?? DEFAULT_VERIFY_QUOTA).windowSeconds * 1000;
  return [
    deliveryJob(db, webhooks, { logger, ...(observer ? { observer } : {}) }),
    recoveryJob(db, webhooks),
    ...(scheduler ? [domainCheckJob(db, domainChecks, scheduler, webhookFanOut(webhooks))] : []),
    retentionJob(db, retainedTables(events.retentionMs, verifyWindowMs), {
      logger,
      everyMs: retentionEveryMs,
      ...(pruned ? { pruned } : {}),
    }),
    keyExpiryJob(db, webhookFanOut(webhooks)),
  ];
}
