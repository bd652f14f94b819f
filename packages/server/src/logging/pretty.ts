import type { DestinationStream } from 'pino';

const LEVELS: Record<number, [name: string, color: string]> = {
  10: ['TRACE', '90'],
  20: ['DEBUG', '36'],
  30: ['INFO ', '32'],
  40: ['WARN ', '33'],
  50: ['ERROR', '31'],
  60: ['FATAL', '35'],
};
/** Fields every line has, shown in the line's head rather than among its details. */
const HEAD_FIELDS = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

/**
 * Log lines for a person at a terminal (docs/operations.md "Logs"): `12:00:01.234 INFO  message key=value …`, with
 * the level coloured, an access-log line shortened to `GET /path 200 1.2ms`, and every other field as `key=JSON`.
 * The same records as the JSON lines (redaction happens before this), only written for reading; a few lines of
 * code instead of a pretty-printing dependency.
 */
export function prettyDestination(out: { write(text: string): unknown }, color: boolean): DestinationStream {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line);
      } catch {
        out.write(line);
        return;
      }
      out.write(`${formatRecord(record, color)}\n`);
    },
  };
}

export function formatRecord(record: Record<string, unknown>, color: boolean): string {
  const [name, code] = LEVELS[record.level as number] ?? [String(record.level).padEnd(5), '0'];
  const time = typeof record.time === 'string' ? record.time.slice(11, 23) : '';
  const level = color ? `\x1b[${code}m${name}\x1b[0m` : name;
  const parts = [time, level, String(record.msg ?? '')];
  const req = record.req as { method?: string; url?: string } | undefined;
  const res = record.res as { statusCode?: number } | undefined;
  if (req?.method && res?.statusCode !== undefined) {
    const ms = typeof record.responseTime === 'number' ? `${record.responseTime.toFixed(1)}ms` : '';
    parts.push(`${req.method} ${req.url} ${res.statusCode} ${ms}`.trimEnd());
  }
  for (const [key, value] of Object.entries(record)) {
    if (HEAD_FIELDS.has(key) || (parts.length > 3 && ['req', 'res', 'responseTime'].includes(key))) continue;
    parts.push(`${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  }
  return parts.filter(Boolean).join(' ');
}
