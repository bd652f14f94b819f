import type { Logger } from 'pino';
import { AppError } from '../errors/app-error.ts';
import type { App } from '../http/types.ts';
import type { RateLimiter, RateLimitRule, RateLimitState } from '../ratelimit/index.ts';
import type { ApiClientsService, ClientQuotaSettings } from './api-clients.service.ts';
import { LruCache } from './lru-cache.ts';

/** Every quota counts per minute: the window of `RateLimit-Policy` `w=60`. */
export const QUOTA_WINDOW_MS = 60_000;
/**
 * How long a node keeps a client's API-call quota before reading it again: a quota changed on another node (or by
 * the CLI) applies within this time; a change made through this node's `set` applies at once.
 */
export const QUOTA_CACHE_MS = 5_000;
const QUOTA_CACHE_ENTRIES = 10_000;

/** The two quotas of a client, by the policy name the `RateLimit` headers carry. */
export type QuotaPolicy = 'tokens' | 'api';

export interface QuotaDefaults {
  tokensPerMinute: number;
  apiCallsPerMinute: number;
}

/** One counted request: the window's state, and the headers that tell the client about it. */
export interface QuotaCharge {
  state: RateLimitState;
  headers: Record<string, string>;
}

/** 429 of a bearer-protected API call over the client's quota (problem+json; RFC 6585 §4 `Retry-After`). */
export class ClientQuotaExceededError extends AppError {
  constructor(charge: QuotaCharge) {
    super(
      429,
      'client_quota_exceeded',
      `This API client made more calls this minute than its quota allows; retry after ${charge.state.retryAfterSeconds} seconds.`,
      { retry_after: charge.state.retryAfterSeconds },
      { ...charge.headers, 'retry-after': String(charge.state.retryAfterSeconds) },
    );
  }
}

/**
 * `RateLimit-Policy` and `RateLimit` (draft-ietf-httpapi-ratelimit-headers, structured-field syntax of its latest
 * drafts, RFC 9651 Lists of Items): the policy names the quota `q` per window `w` seconds; the state the requests
 * `r` left in the current window and the seconds `t` until it ends.
 */
export function rateLimitHeaders(policy: QuotaPolicy, state: RateLimitState): Record<string, string> {
  const windowSeconds = QUOTA_WINDOW_MS / 1000;
  const reset = Math.min(windowSeconds, Math.max(0, Math.ceil(state.resetMs / 1000)));
  return {
    'ratelimit-policy': `"${policy}";q=${state.limit};w=${windowSeconds}`,
    ratelimit: `"${policy}";r=${state.remaining};t=${reset}`,
  };
}

/**
 * Per-client quotas (docs/machine-access.md "Quotas"): token requests (`tokens`) and bearer API calls (`api`) per
 * minute, each client's own or the configured default, counted by the process's rate limiter — in Redis, shared
 * by every node, when `REDIS_URL` is set (per node while Redis is down), in memory otherwise (ratelimit/).
 */
export class ClientQuotas {
  private readonly cached = new LruCache<string, { settings: ClientQuotaSettings; readAt: number }>(
    QUOTA_CACHE_ENTRIES,
  );

  constructor(
    private readonly limiter: RateLimiter,
    private readonly clients: Pick<ApiClientsService, 'quotasOf' | 'setQuotas'>,
    private readonly defaults: QuotaDefaults,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The rule of one of a client's quotas: its own per-minute number, or the default. */
  ruleOf(policy: QuotaPolicy, settings: ClientQuotaSettings): RateLimitRule {
    const limit =
      policy === 'tokens'
        ? (settings.tokensPerMinute ?? this.defaults.tokensPerMinute)
        : (settings.apiCallsPerMinute ?? this.defaults.apiCallsPerMinute);
    return { limit, windowMs: QUOTA_WINDOW_MS };
  }

  /**
   * Counts one request against a client's quota. `undefined` when the limiter failed: quotas fail open, as every
   * Parley limit does (a Redis outage is no failure: the limiter counts per node meanwhile).
   */
  async charge(
    policy: QuotaPolicy,
    clientId: string,
    settings: ClientQuotaSettings,
  ): Promise<QuotaCharge | undefined> {
    try {
      const state = await this.limiter.hit(
        `oauth:quota:${policy}:${clientId}`,
        this.ruleOf(policy, settings),
      );
      return { state, headers: rateLimitHeaders(policy, state) };
    } catch (err) {
      this.logger.warn({ err: { message: (err as Error).message } }, 'quota not counted; limiter failed');
      return undefined;
    }
  }

  /** Counts one bearer API call of a client, with its quota read at most every QUOTA_CACHE_MS per node. */
  async chargeApiCall(clientId: string): Promise<QuotaCharge | undefined> {
    return this.charge('api', clientId, await this.settingsOf(clientId));
  }

  /** Changes a client's quotas (ApiClientsService.setQuotas); this node applies them at once. */
  async set(input: Parameters<ApiClientsService['setQuotas']>[0]): Promise<ClientQuotaSettings> {
    const settings = await this.clients.setQuotas(input);
    this.cached.set(input.clientId, { settings, readAt: this.clock() });
    return settings;
  }

  private async settingsOf(clientId: string): Promise<ClientQuotaSettings> {
    const at = this.clock();
    const hit = this.cached.get(clientId);
    if (hit && at - hit.readAt < QUOTA_CACHE_MS) return hit.settings;
    const settings = (await this.clients.quotasOf(clientId)) ?? {
      tokensPerMinute: null,
      apiCallsPerMinute: null,
    };
    this.cached.set(clientId, { settings, readAt: at });
    return settings;
  }
}

/**
 * Counts every bearer-protected call (routes declaring `config.requiredScope`) against its client's `api` quota,
 * right after the bearer step: every answer of such a route carries `RateLimit-Policy` and `RateLimit`, and a call
 * over the quota is 429 `client_quota_exceeded` with `Retry-After`. Register it BEFORE `registerBearerAuth`:
 * Fastify runs `onRoute` hooks in order and the bearer hook puts its own step first, so this one runs second.
 */
export function registerApiQuotas(app: App, quotas: ClientQuotas): void {
  app.addHook('onRoute', (route) => {
    if (route.config?.requiredScope === undefined) return;
    const quotaStep = async (
      request: { principal?: { clientId: string } },
      reply: { header(name: string, value: string): unknown },
    ) => {
      if (!request.principal) return;
      const charge = await quotas.chargeApiCall(request.principal.clientId);
      if (!charge) return;
      for (const [name, value] of Object.entries(charge.headers)) reply.header(name, value);
      if (!charge.state.allowed) throw new ClientQuotaExceededError(charge);
    };
    route.onRequest = [quotaStep, ...[route.onRequest ?? []].flat()];
  });
}
