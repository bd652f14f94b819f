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

/** `json`: one JSON object per line; `pretty`: lines for reading (logging/pretty.ts); `auto`: pretty on a terminal. */
export type LogFormat = 'auto' | 'json' | 'pretty';

/**
 * The process logger: JSON lines on standard output (or `destination`), unless `format` asks for readable lines —
 * `auto` gives them when standard output is a terminal, so a person running `npm start` reads text while a
 * container's collector still gets JSON.
 */
export function createLogger(
  level: string,
  destination?: pino.DestinationStream,
  format: LogFormat = 'json',
): Logger {
  const out = destination ?? process.stdout;
  const terminal = destination === undefined && process.stdout.isTTY === true;
  const pretty = format === 'pretty' || (format === 'auto' && terminal);
  if (pretty) return pino(loggerOptions(level), prettyDestination(out, terminal));
  return destination ? pino(loggerOptions(level), destination) : pino(loggerOptions(level));
}

export type { Logger };
