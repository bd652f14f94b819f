import { TooManyRequestsError } from '../errors/app-error.ts';
import type { RateLimiter, RateLimitRule } from '../ratelimit/index.ts';

export interface LoginThrottleLimits {
  /** Failures per (client IP, email). */
  perEmail: number;
  /** Failures per email over every IP. */
  perEmailAllIps: number;
  /** Failures per client IP over every email. */
  perIp: number;
  windowSeconds: number;
}

/**
 * Failed portal sign-ins are limited (OWASP Authentication Cheat Sheet, "login throttling") on the shared rate
 * limiter (`src/ratelimit/`: Redis-backed across nodes when REDIS_URL is set), with three budgets per window:
 * - per (client IP, email): one address guessing one account's password is stopped early, and only there — the
 *   account's owner signing in from elsewhere is not locked out by it;
 * - per email over every IP, much larger: guessing one account from many addresses stays bounded (an attacker
 *   needs many addresses to spend it, and from one address adds at most the per-(IP, email) budget);
 * - per IP over every email: one address trying many accounts.
 * The token endpoint's failed authentications have the same shape (oauth/token-endpoint.ts). Pattern from the
 * limiter's docs: `peek` refuses while blocked without counting, `hit` counts failures only.
 */
export class LoginThrottle {
  private readonly pairRule: RateLimitRule;
  private readonly emailRule: RateLimitRule;
  private readonly ipRule: RateLimitRule;

  constructor(
    private readonly limiter: RateLimiter,
    limits: LoginThrottleLimits,
  ) {
    const windowMs = limits.windowSeconds * 1000;
    this.pairRule = { limit: limits.perEmail, windowMs };
    this.emailRule = { limit: limits.perEmailAllIps, windowMs };
    this.ipRule = { limit: limits.perIp, windowMs };
  }

  /** Throws 429 (with Retry-After) while any budget of this email and IP is spent. */
  async check(email: string, ip: string): Promise<void> {
    const states = await Promise.all(
      this.budgets(email, ip).map(([key, rule]) => this.limiter.peek(key, rule)),
    );
    const blocked = states.filter((s) => !s.allowed);
    if (blocked.length > 0) {
      throw new TooManyRequestsError(
        Math.max(...blocked.map((s) => s.retryAfterSeconds)),
        'Too many failed sign-ins; retry later.',
      );
    }
  }

  async recordFailure(email: string, ip: string): Promise<void> {
    await Promise.all(this.budgets(email, ip).map(([key, rule]) => this.limiter.hit(key, rule)));
  }

  /**
   * A successful sign-in clears its (IP, email) count. The email's count over every IP and the IP's own count stay:
   * one success must not reopen guessing from other addresses, nor let one address try many emails.
   */
  async recordSuccess(email: string, ip: string): Promise<void> {
    await this.limiter.reset(pairKey(email, ip));
  }

  private budgets(email: string, ip: string): Array<[string, RateLimitRule]> {
    return [
      [pairKey(email, ip), this.pairRule],
      [`portal:login:email:${email}`, this.emailRule],
      [`portal:login:ip:${ip}`, this.ipRule],
    ];
  }
}

const pairKey = (email: string, ip: string) => `portal:login:ip_email:${ip}:${email}`;
