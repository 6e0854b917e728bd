// The event log's settings an operator may change (the configuration table in the operations guide), with their
// defaults; read from the environment by server/config.ts.

export interface EventSettings {
  /** How long events (and the delivery log that refers to them) are kept, in milliseconds. */
  retentionMs: number;
}

export const DEFAULT_EVENT_SETTINGS: EventSettings = { retentionMs: 30 * 86_400_000 };

/** The settings from the environment; problems are pushed on `problems` (config.ts reports them all at once). */
export function readEventSettings(env: NodeJS.ProcessEnv, problems: string[]): EventSettings {
  const text = env.EVENT_RETENTION_DAYS;
  if (text === undefined || text === '') return DEFAULT_EVENT_SETTINGS;
  const days = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || days < 0.0001 || days > 3650) {
    problems.push(`EVENT_RETENTION_DAYS must be a number from 0.0001 to 3650 (got "${text}")`);
    return DEFAULT_EVENT_SETTINGS;
  }
  return { retentionMs: days * 86_400_000 };
}
