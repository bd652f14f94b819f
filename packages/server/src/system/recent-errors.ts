import type { RecentErrorView } from '@parley/wire-types';
import { LruCache } from '../oauth/lru-cache.ts';

/** One warning or error a node logged, reduced to fields that name no tenant data and no secret. */
export type RecentError = RecentErrorView;

const LEVELS: Record<number, RecentError['level']> = { 40: 'warn', 50: 'error', 60: 'fatal' };
/** Entries kept per company. */
const CAPACITY = 50;
/** Companies with entries kept; the one whose entries are oldest goes first. */
const COMPANIES = 1_000;

/**
 * The last warnings and errors of this node per company, for the portal's system view: bounded rings fed with the
 * JSON lines the logger writes (so redaction has already happened), keeping only fields safe to show the company's
 * admins — log messages are constants and codes are identifiers; error texts and request details are left out.
 *
 * A line belongs to a company when it carries `company_id`: a line of a request that authenticated as that company
 * (logging/request-company.ts). Every other line — node-wide trouble, or a request that proved no company,
 * whatever request id its caller chose — stays in the log and the metrics and is shown to no company.
 */
export class RecentErrors {
  private readonly byCompany = new LruCache<string, RecentError[]>(COMPANIES);

  /** Takes one serialised log line; lines below warn, without a company, or not JSON, are ignored. */
  recordLine(line: string): void {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const level = LEVELS[Number(record.level)];
    const companyId = identifier(record.company_id);
    if (level === undefined || companyId === null) return;
    const err = record.err as { code?: unknown; type?: unknown } | undefined;
    const entries = this.byCompany.get(companyId) ?? [];
    entries.push({
      at: typeof record.time === 'string' ? record.time : new Date().toISOString(),
      level,
      message: typeof record.msg === 'string' ? record.msg.slice(0, 200) : '',
      module: typeof record.module === 'string' ? record.module : null,
      code: identifier(err?.code) ?? identifier(err?.type) ?? identifier(record.code),
      request_id: identifier(record.request_id),
    });
    if (entries.length > CAPACITY) entries.shift();
    this.byCompany.set(companyId, entries);
  }

  /** The company's own entries, newest first. */
  list(companyId: string): RecentError[] {
    return [...(this.byCompany.get(companyId) ?? [])].reverse();
  }
}

/** A short identifier-like value (an error code, a class name, a request id), or null for anything else. */
function identifier(value: unknown): string | null {
  return typeof value === 'string' && /^[\w.:-]{1,80}$/.test(value) ? value : null;
}
