import type { CommandRateLimit } from './options.ts';

/** Token bucket state kept inline on the session (two numbers) instead of an object per connection. */
export interface RateLimited {
  rateTokens: number;
  rateUpdatedAt: number;
}

/** Takes one token; false when the bucket is empty. */
export function takeRateToken(target: RateLimited, limit: CommandRateLimit, now: number): boolean {
  const elapsed = now - target.rateUpdatedAt;
  if (elapsed > 0) {
    target.rateTokens = Math.min(limit.burst, target.rateTokens + (elapsed * limit.perSecond) / 1000);
    target.rateUpdatedAt = now;
  }
  if (target.rateTokens < 1) return false;
  target.rateTokens -= 1;
  return true;
}
