import {
  assertRule,
  type RateLimiter,
  type RateLimitRule,
  type RateLimitState,
  stateOf,
} from './rate-limiter.ts';

interface Window {
  count: number;
  /** Epoch ms at which this record is useless (its window has ended). */
  endsAt: number;
}

/** Counts in this process only: the default when no Redis is configured (one node). */
export class MemoryRateLimiter implements RateLimiter {
  readonly kind = 'memory';
  private readonly windows = new Map<string, Window>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(sweepIntervalMs = 60_000) {
    // Ended windows are dropped in the background so keys seen once (e.g. one IP) do not accumulate.
    this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.sweeper.unref();
  }

  async hit(key: string, rule: RateLimitRule, cost = 1): Promise<RateLimitState> {
    assertRule(rule, cost);
    return this.count(key, rule, cost, true);
  }

  async peek(key: string, rule: RateLimitRule): Promise<RateLimitState> {
    assertRule(rule, 0);
    return this.count(key, rule, 0, false);
  }

  async reset(key: string): Promise<void> {
    this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.windows.clear();
  }

  private count(key: string, rule: RateLimitRule, cost: number, counted: boolean): RateLimitState {
    // A window opens at the key's first counted hit (same rule as the Redis script): an epoch-aligned window would
    // let a burst straddling a boundary through twice the limit.
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { count: 0, endsAt: now + rule.windowMs };
      if (cost > 0) this.windows.set(key, window);
    }
    window.count += cost;
    return stateOf(window.count, rule, window.endsAt - now, counted);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
