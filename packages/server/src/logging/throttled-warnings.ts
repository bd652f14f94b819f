import type { Logger } from 'pino';

/** How long identical warnings are counted rather than written, by default. */
export const WARNING_INTERVAL_MS = 30_000;

/**
 * Warnings that repeat while something stays broken (a store or broker outage) without flooding the log: the first
 * occurrence of a message is written at once, later ones within `intervalMs` are only counted, and the first one
 * after the interval writes a summary `"<message> (repeated N times in the last S s)"` with `repeated: N` and the
 * newest fields — so an outage of any length costs one line per message per interval, however many callers (every
 * reply, every 100 ms poll) hit it. Identical means the same message text; the fields (error, message id) of the
 * suppressed ones are not kept, only counted.
 *
 * One per process or per component: it holds one entry per distinct message, a handful in practice.
 */
export class ThrottledWarnings {
  private readonly byMessage = new Map<string, { windowStart: number; suppressed: number }>();
  private readonly intervalMs: number;
  private readonly clock: () => number;

  constructor(
    private readonly logger: Pick<Logger, 'warn'>,
    options: { intervalMs?: number; clock?: () => number } = {},
  ) {
    this.intervalMs = options.intervalMs ?? WARNING_INTERVAL_MS;
    this.clock = options.clock ?? Date.now;
  }

  warn(fields: Record<string, unknown>, message: string): void {
    const now = this.clock();
    const entry = this.byMessage.get(message);
    if (entry && now - entry.windowStart < this.intervalMs) {
      entry.suppressed += 1;
      return;
    }
    if (entry && entry.suppressed > 0) {
      const seconds = Math.round((now - entry.windowStart) / 1000);
      this.logger.warn(
        { ...fields, repeated: entry.suppressed + 1 },
        `${message} (repeated ${entry.suppressed + 1} times in the last ${seconds} s)`,
      );
    } else {
      this.logger.warn(fields, message);
    }
    this.byMessage.set(message, { windowStart: now, suppressed: 0 });
  }
}

/** An error as a log field without its stack: the stack of the hundredth identical failure says nothing new. */
export function errorField(err: unknown): { message: string; code?: string } {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? { message: err.message, code } : { message: err.message };
  }
  return { message: String(err) };
}
