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

/** A request URL without its query string, as logs show it. */
export function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'parley' },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: {
      // Only the path: query strings can carry tokens (e.g. a misconfigured client).
      req: (req) => ({ method: req.method, url: pathOf(String(req.url)), remoteAddress: req.ip }),
      res: (res) => ({ statusCode: res.statusCode }),
      err: pino.stdSerializers.err,
    },
  };
}

/** The fields of one access-log line, as the `req`/`res` serializers above read them. */
export interface AccessLine {
  requestId: string;
  method: string | undefined;
  /** The path without the query (query strings can carry tokens). */
  path: string;
  remoteAddress: string | undefined;
  statusCode: number;
  responseTime: number;
}

/**
 * Writes access-log lines (`request completed`) to `logger`'s destination at info, byte for byte the record pino
 * would write — `level`, `time`, the logger's bindings (`service`, a worker's `worker`), `request_id`, `req`, `res`,
 * `responseTime`, `msg` — but built as one string: no record object, no serializer calls, no redaction pass. Every
 * field is a request's method, path without query, address, status or duration, none of which can hold a secret; on
 * the token endpoint pino's generic path (redaction walking every wildcard of `REDACTED_PATHS`, serializers, a
 * child logger per line) cost more CPU than the grant's own database read (issue 27).
 */
export function accessLineWriter(logger: Logger): (line: AccessLine) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const destination = internals[pino.symbols.streamSym] as pino.DestinationStream;
  // pino keeps a logger's bindings serialised once, as `,"key":value…` (the base included).
  const bindings = String(internals[pino.symbols.chindingsSym] ?? '');
  return (line) => {
    if (!logger.isLevelEnabled('info')) return;
    const address =
      line.remoteAddress === undefined ? '' : `,"remoteAddress":${JSON.stringify(line.remoteAddress)}`;
    const took = Number.isFinite(line.responseTime) ? line.responseTime : null;
    destination.write(
      `{"level":30,"time":"${new Date().toISOString()}"${bindings},"request_id":${JSON.stringify(line.requestId)},"req":{"method":${JSON.stringify(line.method ?? '')},"url":${JSON.stringify(line.path)}${address}},"res":{"statusCode":${line.statusCode}},"responseTime":${took},"msg":"request completed"}\n`,
    );
  };
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
