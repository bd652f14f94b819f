import pino, { type Logger, type LoggerOptions } from 'pino';
import { prettyDestination } from './pretty.ts';

/**
 * Paths that may hold secrets anywhere in a log record. pino replaces them before serialisation, so a secret
 * never reaches standard output even if a caller logs a whole request or object by mistake.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers["x-visitor-token"]',
  'res.headers["set-cookie"]',
  '*.authorization',
  '*.password',
  '*.client_secret',
  '*.clientSecret',
  '*.secret',
  '*.api_key',
  '*.apiKey',
  '*.access_token',
  '*.token',
  '*.connection_token',
  '*.subscription_token',
  '*.privateKey',
  '*.private_key',
  '*.identity_secret',
  '*.identitySecret',
  '*.visitor_token',
  '*.visitorToken',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'parley' },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: {
      // Only the path: query strings can carry tokens (e.g. a misconfigured client).
      req: (req) => ({ method: req.method, url: String(req.url).split('?')[0], remoteAddress: req.ip }),
      res: (res) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
  };
}

/**
 * A logger writing to the same destination at the same level, without the redaction pass, for records whose every
 * field is built by the serializers above and can hold no secret: the access-log line (method, path without the
 * query, remote address, status, duration, request id). Redaction walks every wildcard path of `REDACTED_PATHS`
 * over every record; on the token endpoint that walk cost more CPU than writing the line itself.
 */
export function unredactedTwin(logger: Logger): Logger {
  const destination = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym];
  const { redact: _, ...options } = loggerOptions(logger.level);
  // With the bindings of `logger`: its base (`service`) and what children added (a worker's `worker`, say). The twin
  // has no base of its own, or every line would carry `service` twice (once from the base, once from the bindings).
  return pino({ ...options, base: null }, destination).child(logger.bindings());
}

/** `json`: one JSON object per line; `pretty`: lines for reading (logging/pretty.ts); `auto`: pretty on a terminal. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The process logger: JSON lines on standard output (or `destination`), unless `format` asks for readable lines —
 * `auto` gives them when standard output is a terminal, so a person running `npm start` reads text while a
 * container's collector still gets JSON. `onWarning` also receives every line at warn or above, as JSON (already
 * redacted): the system view's recent errors (system/recent-errors.ts).
 */
export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  format: LogFormat = 'json',
  onWarning?: (line: string) => void,
): Logger {
  const out = destination ?? process.stdout;
  const terminal = destination === undefined && process.stdout.isTTY === true;
  const pretty = format === 'pretty' || (format === 'auto' && terminal);
  const main = pretty ? prettyDestination(out, terminal) : (destination ?? pino.destination(1));
  return pino(loggerOptions(level), onWarning ? teeWarnings(main, onWarning) : main);
}

/**
 * Writes every line to `main`, and lines at warn (40) or above to `onWarning` too. pino writes `level` first, so
 * the check reads two digits instead of parsing the line.
 */
function teeWarnings(
  main: pino.DestinationStream,
  onWarning: (line: string) => void,
): pino.DestinationStream {
  return {
    write(line: string) {
      main.write(line);
      if (line.startsWith('{"level":') && Number(line.slice(9, 11)) >= 40) onWarning(line);
    },
  };
}

export type { Logger };
