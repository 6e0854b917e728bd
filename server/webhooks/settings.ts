// The webhook settings an operator may change (the configuration table in the operations guide), with their
// defaults; read from the environment by server/config.ts.
import { type NumberRule, numberSetting } from '../env-numbers.js';
import { STANDARD_RETRY_SCHEDULE_S } from './schedule.js';

export interface WebhookSettings {
  /** Allow http:// targets and private, loopback and link-local addresses (development and tests only). */
  allowPrivateTargets: boolean;
  /** Endpoints one account may have. */
  maxEndpoints: number;
  /** Undelivered events one endpoint may have queued; past it the endpoint is disabled (`queue_full`). */
  maxQueuePerEndpoint: number;
  /** The largest payload delivered, in bytes; a larger one fails its delivery at once. */
  maxPayloadBytes: number;
  /** One attempt's limit, connecting and reading the answer included, in milliseconds. */
  timeoutMs: number;
  /** Delays between attempts, in seconds (Standard Webhooks' schedule by default). */
  retryScheduleS: readonly number[];
  /** An endpoint with no successful delivery for this long (and failures meanwhile) is disabled (`failing`). */
  disableAfterMs: number;
  /** An endpoint failing for this long is announced once (`webhook_endpoint.failing`) to the account's others. */
  failingNoticeMs: number;
  /** How long the previous secret still signs after a rotation, in milliseconds. */
  secretOverlapMs: number;
  /** How often a worker looks for due deliveries when nothing woke it, in milliseconds. */
  pollMs: number;
  /** Deliveries one process sends at the same time. */
  concurrency: number;
  /** Deliveries one endpoint has in flight at once, in all processes together (1 while it is failing). */
  endpointConcurrency: number;
  /** Of one process's `concurrency`, how many deliveries one account may have in flight at once. */
  accountConcurrency: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  allowPrivateTargets: false,
  maxEndpoints: 20,
  maxQueuePerEndpoint: 10_000,
  maxPayloadBytes: 64 * 1024,
  timeoutMs: 15_000,
  retryScheduleS: STANDARD_RETRY_SCHEDULE_S,
  disableAfterMs: 5 * 86_400_000,
  failingNoticeMs: 3_600_000,
  secretOverlapMs: 86_400_000,
  pollMs: 1_000,
  concurrency: 32,
  endpointConcurrency: 16,
  accountConcurrency: 16,
};

/** The settings from the environment; problems are pushed on `problems` (config.ts reports them all at once). */
export function readWebhookSettings(env: NodeJS.ProcessEnv, problems: string[]): WebhookSettings {
  const d = DEFAULT_WEBHOOK_SETTINGS;
  const number = (name: string, fallback: number, rule: NumberRule = {}) => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const value = numberSetting(name, text, rule, problems);
    return Number.isNaN(value) ? fallback : value;
  };
  const flag = env.WEBHOOK_ALLOW_PRIVATE_TARGETS ?? '';
  if (!['', '0', '1'].includes(flag)) problems.push(`WEBHOOK_ALLOW_PRIVATE_TARGETS must be 0 or 1 (got "${flag}")`);
  const scheduleText = env.WEBHOOK_RETRY_SCHEDULE_S;
  let retryScheduleS = d.retryScheduleS;
  if (scheduleText !== undefined && scheduleText !== '') {
    const parts = scheduleText.split(',').map((part) => part.trim());
    if (parts.length > 50 || !parts.every((part) => /^\d+(\.\d+)?$/.test(part) && Number(part) <= 604_800)) {
      problems.push(
        `WEBHOOK_RETRY_SCHEDULE_S must be up to 50 comma-separated delays in seconds, each at most 604800 (got "${scheduleText}")`,
      );
    } else {
      retryScheduleS = parts.map(Number);
    }
  }
  const concurrency = number('WEBHOOK_CONCURRENCY', d.concurrency, { min: 1, max: 256, integer: true });
  return {
    allowPrivateTargets: flag === '1',
    maxEndpoints: number('WEBHOOK_MAX_ENDPOINTS', d.maxEndpoints, { min: 1, max: 1000, integer: true }),
    maxQueuePerEndpoint: number('WEBHOOK_MAX_QUEUE', d.maxQueuePerEndpoint, { min: 1, max: 1_000_000, integer: true }),
    maxPayloadBytes: number('WEBHOOK_MAX_PAYLOAD_BYTES', d.maxPayloadBytes, {
      min: 1024,
      max: 1_048_576,
      integer: true,
    }),
    timeoutMs: number('WEBHOOK_TIMEOUT_S', d.timeoutMs / 1000, { min: 0.1, max: 300 }) * 1000,
    retryScheduleS,
    disableAfterMs: number('WEBHOOK_DISABLE_AFTER_S', d.disableAfterMs / 1000, { min: 1, max: 90 * 86_400 }) * 1000,
    failingNoticeMs: number('WEBHOOK_FAILING_NOTICE_S', d.failingNoticeMs / 1000, { min: 1, max: 90 * 86_400 }) * 1000,
    secretOverlapMs: number('WEBHOOK_SECRET_OVERLAP_S', d.secretOverlapMs / 1000, { max: 30 * 86_400 }) * 1000,
    pollMs: number('WEBHOOK_POLL_S', d.pollMs / 1000, { min: 0.01, max: 60 }) * 1000,
    concurrency,
    endpointConcurrency: number('WEBHOOK_ENDPOINT_CONCURRENCY', d.endpointConcurrency, {
      min: 1,
      max: 64,
      integer: true,
    }),
    // Half the pool by default, so that another account always finds room beside one whose receivers hang.
    accountConcurrency: number('WEBHOOK_ACCOUNT_CONCURRENCY', Math.ceil(concurrency / 2), {
      min: 1,
      max: 256,
      integer: true,
    }),
  };
}
