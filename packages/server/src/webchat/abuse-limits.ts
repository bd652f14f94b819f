import type { Logger } from 'pino';
import { TooManyRequestsError } from '../errors/app-error.ts';
import type { RateLimiter } from '../ratelimit/index.ts';

export interface LimitCheck {
  key: string;
  limit: number;
  /** The counting window; a minute unless said otherwise. */
  windowMs?: number;
}

const WINDOW_MS = 60_000;

/**
 * The webchat's abuse limits (conversations created, messages sent; per session and per IP) on the shared rate
 * limiter: Redis-backed and shared by all nodes when REDIS_URL is set (docs/config.md "Webchat").
 */
export class AbuseLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly logger: Logger,
  ) {}

  /** Counts one event on every key; the seconds to wait when any is over its limit, `undefined` when allowed. */
  async check(checks: LimitCheck[]): Promise<number | undefined> {
    try {
      const states = await Promise.all(
        checks.map((c) =>
          this.limiter.hit(`webchat:${c.key}`, { limit: c.limit, windowMs: c.windowMs ?? WINDOW_MS }),
        ),
      );
      const denied = states.filter((s) => !s.allowed);
      return denied.length === 0 ? undefined : Math.max(1, ...denied.map((s) => s.retryAfterSeconds));
    } catch (err) {
      // A limiter outage must not stop every chat: fail open and say so.
      this.logger.warn({ err: (err as Error).message }, 'webchat rate limiter unavailable; allowing');
      return undefined;
    }
  }

  /** Like `check`, throwing the 429 problem with Retry-After (RFC 6585 §4). */
  async enforce(checks: LimitCheck[], what: string): Promise<void> {
    const retryAfter = await this.check(checks);
    if (retryAfter !== undefined)
      throw new TooManyRequestsError(retryAfter, `Too many ${what}; retry in ${retryAfter} s.`);
  }
}
