// The event log's settings an operator may change (the configuration table in the operations guide), with their
// defaults; read from the environment by server/config.ts.
import { numberSetting } from '../env-numbers.js';

export interface EventSettings {
  /** How long events (and the delivery log that refers to them) are kept, in milliseconds. */
  retentionMs: number;
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = { retentionMs: 30 * 86_400_000 };

/** The settings from the environment; problems are pushed on `problems` (config.ts reports them all at once). */
export function readEventSettings(env: NodeJS.ProcessEnv, problems: string[]): EventSettings {
  const text = env.EVENT_RETENTION_DAYS;
  if (text === undefined || text === '') return DEFAULT_EVENT_SETTINGS;
  const days = numberSetting('EVENT_RETENTION_DAYS', text, { min: 0.0001, max: 3650 }, problems);
  return Number.isNaN(days) ? DEFAULT_EVENT_SETTINGS : { retentionMs: days * 86_400_000 };
}
