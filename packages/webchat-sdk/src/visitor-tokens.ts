/**
 * Where the SDK gets the visitor token for `X-Visitor-Token` (a verified visitor, on channels with identity on):
 * your backend signs it (HS256 with the channel's identity secret) and your page hands it over.
 *
 * Return `null` (or `undefined`) for an anonymous visitor.
 *
 * @example
 * ```ts
 * const chat = new Webchat({
 *   baseUrl, companyId, channelId,
 *   getVisitorToken: async () => (await fetch('/me/parley-token')).text(),
 * });
 * ```
 */
export type GetVisitorToken = () => string | null | undefined | Promise<string | null | undefined>;

/** A cached token is renewed this long before its `exp`, so no request goes out with one about to lapse. */
const RENEW_BEFORE_EXPIRY_MS = 30_000;

/**
 * The visitor token of one {@link Webchat}: a fixed token (`visitorToken`, {@link Webchat.identify}) or a callback
 * (`getVisitorToken`), called before a REST call when no token is cached (or the cached one is about to expire,
 * read from its `exp`), and again when the server refuses the token (`visitor_token_invalid`).
 */
export class VisitorTokens {
  private cached: string | undefined;
  private getter: GetVisitorToken | undefined;
  private pending: Promise<string | undefined> | null = null;

  constructor(options: { visitorToken?: string; getVisitorToken?: GetVisitorToken } = {}) {
    this.cached = options.visitorToken || undefined;
    this.getter = options.getVisitorToken;
  }

  /** Whether this visitor is (to be) identified: a token or a way to get one. */
  get identified(): boolean {
    return this.cached !== undefined || this.getter !== undefined;
  }

  /** The token for the next request; asks the callback when none is cached or the cached one expires soon. */
  async current(): Promise<string | undefined> {
    if (this.cached !== undefined && !(this.getter && expiresSoon(this.cached))) return this.cached;
    if (!this.getter) return this.cached;
    return this.fetch();
  }

  /**
   * The server refused `rejected`: asks the callback for a new token (once per refusal, shared by concurrent
   * callers). `undefined` when there is no callback or it has nothing new, so the caller gives up.
   */
  async renew(rejected: string | undefined): Promise<string | undefined> {
    if (!this.getter) return undefined;
    if (this.cached !== rejected && this.cached !== undefined) return this.cached;
    this.cached = undefined;
    const next = await this.fetch();
    return next !== rejected ? next : undefined;
  }

  /** Uses `token` from now on (the callback, if any, is still asked when it expires or is refused). */
  set(token: string): void {
    this.cached = token || undefined;
    this.pending = null;
  }

  /** Forgets the token and the callback: the visitor is anonymous again. */
  clear(): void {
    this.cached = undefined;
    this.getter = undefined;
    this.pending = null;
  }

  private fetch(): Promise<string | undefined> {
    const getter = this.getter!;
    this.pending ??= (async () => {
      try {
        const token = (await getter()) ?? undefined;
        this.cached = token || undefined;
        return this.cached;
      } finally {
        this.pending = null;
      }
    })();
    return this.pending;
  }
}

/** Reads `exp` from a JWT's payload without verifying it (the server does that); true when it lapses soon. */
function expiresSoon(token: string, now = Date.now()): boolean {
  const payload = token.split('.')[1];
  if (!payload) return false;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && exp * 1000 - RENEW_BEFORE_EXPIRY_MS <= now;
  } catch {
    return false;
  }
}
