// Configuration from the environment, checked as a whole: every problem is reported at once.
import { parseDatabaseUrl } from './db/database.js';
import { type CorsOrigins, parseCorsOrigins } from './http/cors.js';
import { LOG_LEVELS, type LogLevel } from './logger.js';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  logLevel: LogLevel;
  corsOrigins: CorsOrigins;
}

export const DEFAULTS = {
  PORT: '3000',
  HOST: '127.0.0.1',
  DATABASE_URL: 'sqlite:data/domain-space.sqlite',
  LOG_LEVEL: 'info',
  CORS_ORIGINS: '*',
} as const;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

export function readConfig(env: NodeJS.ProcessEnv): Config {
  const value = (name: keyof typeof DEFAULTS) => env[name] ?? DEFAULTS[name];
  const problems: string[] = [];

  const port = Number(value('PORT'));
  if (!/^\d+$/.test(value('PORT')) || port > 65535) {
    problems.push(`PORT must be an integer from 0 to 65535 (got "${value('PORT')}")`);
  }
  const host = value('HOST');
  if (host.trim() === '') problems.push('HOST must not be empty');
  const databaseUrl = value('DATABASE_URL');
  const database = parseDatabaseUrl(databaseUrl);
  if ('error' in database) problems.push(database.error);
  const logLevel = value('LOG_LEVEL') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`);
  }

  const corsOrigins = parseCorsOrigins(value('CORS_ORIGINS'));
  if (!Array.isArray(corsOrigins) && typeof corsOrigins === 'object') problems.push(corsOrigins.error);

  if (problems.length > 0) throw new ConfigError(problems);
  return { port, host, databaseUrl, logLevel, corsOrigins: corsOrigins as CorsOrigins };
}
