import { TooManyRequestsError } from '../errors/app-error.ts';
import type { RateLimiter, RateLimitRule } from '../ratelimit/index.ts';

/**
 * Failed portal sign-ins are limited per email and per client IP (OWASP Authentication Cheat Sheet, "login
 * throttling"), on the shared rate limiter (`src/ratelimit/`: Redis-backed across nodes when REDIS_URL is set).
 * Pattern from its docs: `peek` refuses while blocked without counting, `hit` counts failures only.
 */
export class LoginThrottle {
  private readonly emailRule: RateLimitRule;
  private readonly ipRule: RateLimitRule;

  constructor(
    private readonly limiter: RateLimiter,
    limits: { perEmail: number; perIp: number; windowSeconds: number },
  ) {
    this.emailRule = { limit: limits.perEmail, windowMs: limits.windowSeconds * 1000 };
    this.ipRule = { limit: limits.perIp, windowMs: limits.windowSeconds * 1000 };
  }

  /** Throws 429 (with Retry-After) while either the email or the IP has used up its failures. */
  async check(email: string, ip: string): Promise<void> {
    const [byEmail, byIp] = await Promise.all([
      this.limiter.peek(emailKey(email), this.emailRule),
      this.limiter.peek(ipKey(ip), this.ipRule),
    ]);
    const blocked = [byEmail, byIp].filter((s) => !s.allowed);
    if (blocked.length > 0) {
      throw new TooManyRequestsError(
        Math.max(...blocked.map((s) => s.retryAfterSeconds)),
        'Too many failed sign-ins; retry later.',
      );
    }
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    await Promise.all([
      this.limiter.hit(emailKey(email), this.emailRule),
      this.limiter.hit(ipKey(ip), this.ipRule),
    ]);
  }

  /** A successful sign-in clears its email's count (the IP keeps its count: one IP may try many emails). */
  async recordSuccess(email: string): Promise<void> {
    await this.limiter.reset(emailKey(email));
  }
}

const emailKey = (email: string) => `portal:login:email:${email}`;
const ipKey = (ip: string) => `portal:login:ip:${ip}`;
