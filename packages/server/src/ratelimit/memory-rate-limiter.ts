import { FixedWindowRateLimiter } from './rate-limiter.ts';

interface Window {
  count: number;
  /** Epoch ms at which this record is useless (its window has ended). */
  endsAt: number;
}

/** Counts in this process only: the default when no Redis is configured (one node). */
export class MemoryRateLimiter extends FixedWindowRateLimiter {
  readonly kind = 'memory';
  private readonly windows = new Map<string, Window>();
  /** Runs once the first window is kept, not when the limiter is built: building starts nothing (context.ts). */
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly sweepIntervalMs = 60_000,
    /** Milliseconds since the epoch; tests move it instead of waiting for a window to end. */
    private readonly clock: () => number = Date.now,
  ) {
    super();
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.windows.clear();
  }

  protected async countWindow(key: string, cost: number, windowMs: number): Promise<[number, number]> {
    // A window opens at the key's first counted hit (same rule as the Redis script): an epoch-aligned window would
    // let a burst straddling a boundary through twice the limit.
    const now = this.clock();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + windowMs };
      if (cost > 0) this.keep(key, window);
    }
    window.count += cost;
    return [window.count, window.endsAt - now];
  }

  private keep(key: string, window: Window): void {
    this.windows.set(key, window);
    // Ended windows are dropped in the background so keys seen once (e.g. one IP) do not accumulate.
    if (this.sweeper === undefined && !this.closed) {
      this.sweeper = setInterval(() => this.sweep(), this.sweepIntervalMs);
      this.sweeper.unref();
    }
  }

  private sweep(): void {
    const now = this.clock();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
