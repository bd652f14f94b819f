/** One warning or error a node logged, reduced to fields that name no tenant data and no secret. */
export interface RecentError {
  at: string;
  level: 'warn' | 'error' | 'fatal';
  /** The log line's fixed message ("announce failed; retrying"): a string in the code, never user input. */
  message: string;
  module: string | null;
  /** The error's stable code or class name, when the line carried an error. */
  code: string | null;
  request_id: string | null;
}

const LEVELS: Record<number, RecentError['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };
const CAPACITY = 50;

/**
 * The last warnings and errors of this node, for the portal's system view: a bounded ring fed with the JSON lines
 * the logger writes (so redaction has already happened), keeping only fields safe to show any company admin — log
 * messages are constants and codes are identifiers; error texts and request details are left out.
 */
export class RecentErrors {
  private readonly entries: RecentError[] = [];

  /** Takes one serialised log line; lines below warn, or not JSON, are ignored. */
  recordLine(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const level = LEVELS[Number(record.level)];
    if (level === undefined) return;
    const err = record.err as { code?: unknown; type?: unknown } | undefined;
    this.entries.push({
      at: typeof record.time === 'string' ? record.time : new Date().toISOString(),
      level,
      message: typeof record.msg === 'string' ? record.msg.slice(0, 200) : '',
      module: typeof record.module === 'string' ? record.module : null,
      code: identifier(err?.code) ?? identifier(err?.type) ?? identifier(record.code),
      request_id: identifier(record.request_id),
    });
    if (this.entries.length > CAPACITY) this.entries.shift();
  }

  /** Newest first. */
  list(): RecentError[] {
    return [...this.entries].reverse();
  }
}

/** A short identifier-like value (an error code, a class name, a request id), or null for anything else. */
function identifier(value: unknown): string | null {
  return typeof value === 'string' && /^[\w.:-]{1,80}$/.test(value) ? value : null;
}
