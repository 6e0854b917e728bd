// Structured logs by pino: one JSON object per line on stdout (level, time, pid, hostname, msg, fields).
// The rest of the code speaks the small Logger interface below; never give it secrets: callers log ids.
// The request log's headers come with credentials redacted (http/pipeline/log-values.ts). stdout is written
// asynchronously through a buffer of LOG_BUFFER_BYTES: a log reader that stalls never stalls the service; what
// does not fit is dropped, counted (log_lines_dropped_total) and reported in a warning every 10 s.
import { pino } from 'pino';
import { traceFields, tracing } from './tracing.js';

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
  /** Lines dropped so far because the buffer was full (stdout's reader too slow). */
  dropped(): number;
  /** Before exit: writes out what is buffered and ends stdout's stream, waiting at most `timeoutMs` for a reader. */
  close(timeoutMs?: number): Promise<void>;
}

export const DEFAULT_LOG_BUFFER_BYTES = 8 * 1024 * 1024;
const DROP_REPORT_MS = 10_000;
const FLUSH_TIMEOUT_MS = 2_000;

/**
 * A logger at `level`; `write` receives each line without its newline. Without it, stdout through a buffer of
 * `bufferBytes`.
 */
export function createLogger(
  level: LogLevel,
  write?: (line: string) => void,
  { bufferBytes = DEFAULT_LOG_BUFFER_BYTES }: { bufferBytes?: number } = {},
): Logger {
  let dropped = 0;
  let droppedReported = 0;
  let reporting = false;
  const stdout =
    write || level === 'silent' ? undefined : pino.destination({ dest: 1, sync: false, maxLength: bufferBytes });
  const stream = stdout ?? {
    write: (line: string) => write?.(line.endsWith('\n') ? line.slice(0, -1) : line),
  };
  const base = pino(
    {
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      // While tracing is on, each line carries the ids of the span it was written in (a request's, a job's).
      ...(tracing() ? { mixin: traceFields } : {}),
    },
    stream,
  );
  // pino writes one line per write; SonicBoom drops a write whole when the buffer cannot take it.
  stdout?.on('drop', () => {
    dropped++;
    if (reporting) return;
    reporting = true;
    setTimeout(() => {
      reporting = false;
      base.warn(
        { dropped: dropped - droppedReported, dropped_total: dropped, buffer_bytes: bufferBytes },
        'log lines dropped: stdout is read more slowly than the service logs (LOG_BUFFER_BYTES)',
      );
      droppedReported = dropped;
    }, DROP_REPORT_MS).unref();
  });
  const at =
    (name: Exclude<LogLevel, 'silent'>) =>
    (message: string, fields: Fields = {}) =>
      base[name](fields, message);
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    pino: base,
    dropped: () => dropped,
    close: (timeoutMs = FLUSH_TIMEOUT_MS) =>
      new Promise<void>((resolve) => {
        if (!stdout) return resolve();
        const timer = setTimeout(resolve, timeoutMs);
        stdout.once('finish', () => {
          clearTimeout(timer);
          resolve();
        });
        stdout.end();
      }),
  };
}
