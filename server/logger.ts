// Structured logs by pino: one JSON object per line on stdout (level, time, pid, hostname, msg, fields).
// The rest of the code speaks the small Logger interface below; never give it secrets: callers log ids.
// Credentials in request headers are redacted here, for every logger derived from this one.
import { pino } from 'pino';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
  /** The pino logger underneath, for a step that writes pino's own objects (the request log). */
  readonly pino: pino.Logger;
}

/** Header values that must never reach a log line (the request log, http/request-log.ts, has the headers). */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
];

/** A logger at `level`; `write` receives each line without its newline (stdout by default). */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const stream = write
    ? { write: (line: string) => write(line.endsWith('\n') ? line.slice(0, -1) : line) }
    : pino.destination({ dest: 1, sync: true });
  const base = pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: REDACTED_PATHS, censor: '[Redacted]' },
    },
    stream,
  );
  const at =
    (name: Exclude<LogLevel, 'silent'>) =>
    (message: string, fields: Fields = {}) =>
      base[name](fields, message);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), pino: base };
}
