/**
 * One JSON object per line on stdout: `time`, `level`, `msg` and the caller's fields. The fields are keys, kinds,
 * reasons, counts and durations; the runtime never logs an object, a status or a Secret, and error messages are cut to
 * 500 characters.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Values a log line may carry. */
export type LogFields = Readonly<Record<string, string | number | boolean | undefined>>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}

export interface JsonLoggerOptions {
  /** Lines below this level are dropped. @default "info" */
  readonly level?: LogLevel;
  /** Where lines go. @default process.stdout */
  readonly write?: (line: string) => void;
  readonly now?: () => Date;
}

/** The message of an error, for a log line (never a stack, at most 500 characters). */
export function errorMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  // A transport error says little on its own (`fetch failed`, `terminated`): its causes say what failed (a refused
  // connection, a reset), so they are appended.
  let cause: unknown = error instanceof Error ? error.cause : undefined;
  for (let depth = 0; depth < 4 && cause instanceof Error; depth++) {
    const code = (cause as { code?: unknown }).code;
    const said = cause.message || (typeof code === 'string' ? code : '');
    if (said && !message.includes(said)) message += `: ${said}`;
    cause = cause.cause;
  }
  return message.length > 500 ? `${message.slice(0, 497)}...` : message;
}

export function jsonLogger(options: JsonLoggerOptions = {}, bound: LogFields = {}): Logger {
  const min = LOG_LEVELS.indexOf(options.level ?? 'info');
  const write = options.write ?? ((line: string) => void process.stdout.write(line));
  const now = options.now ?? (() => new Date());
  const log = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
    if (LOG_LEVELS.indexOf(level) < min) return;
    write(`${JSON.stringify({ time: now().toISOString(), level, msg, ...bound, ...fields })}\n`);
  };
  return {
    debug: log('debug'),
    info: log('info'),
    warn: log('warn'),
    error: log('error'),
    child: (fields) => jsonLogger(options, { ...bound, ...fields }),
  };
}

/** A logger that writes nothing. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
