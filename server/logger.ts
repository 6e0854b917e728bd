// A small structured logger: one JSON object per line on stdout. Never given secrets: callers log ids.
export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
type Fields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
}

export function createLogger(
  level: LogLevel,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Logger {
  const threshold = LOG_LEVELS.indexOf(level);
  const at =
    (name: Exclude<LogLevel, 'silent'>) =>
    (message: string, fields: Fields = {}) => {
      if (LOG_LEVELS.indexOf(name) < threshold) return;
      write(JSON.stringify({ time: new Date().toISOString(), level: name, msg: message, ...fields }));
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
