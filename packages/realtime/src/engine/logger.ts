/** The logging surface the engine needs; a pino logger fits it as is. Never pass secrets in `fields`. */
export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

type Level = 'debug' | 'info' | 'warn' | 'error';
const LEVELS: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** JSON lines on a stream from `minLevel` up; the default logs only warnings and errors to stderr. */
export function createJsonLogger(
  minLevel: Level = 'warn',
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const make =
    (level: Level) =>
    (fields: object, message: string): void => {
      if (LEVELS[level] < LEVELS[minLevel]) return;
      write(
        `${JSON.stringify({ time: new Date().toISOString(), level, msg: message, component: 'realtime', ...fields })}\n`,
      );
    };
  return { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
