import type { IncomingMessage } from 'node:http';
import type { RealtimeHooks } from './hooks.ts';
import type { Logger } from './logger.ts';

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Compiles Centrifugo `allowed_origins` patterns (`*` matches any run of characters, case-insensitive). */
export function compileOriginPatterns(patterns: readonly string[]): RegExp[] {
  return patterns.map((p) => new RegExp(`^${p.split('*').map(escapeRegExp).join('.*')}$`, 'i'));
}

/**
 * Origin check at upgrade time. No Origin header (non-browser clients) passes; with no patterns only same-origin
 * requests pass (Origin host equals Host), as Centrifugo does when `allowed_origins` is empty.
 */
export function isOriginAllowed(
  origin: string | undefined,
  request: IncomingMessage,
  patterns: RegExp[],
): boolean {
  if (origin === undefined || origin === '') return true;
  if (patterns.length === 0) {
    try {
      return new URL(origin).host.toLowerCase() === (request.headers.host ?? '').toLowerCase();
    } catch {
      return false;
    }
  }
  return patterns.some((pattern) => pattern.test(origin));
}

/**
 * The Origin policy of every client transport (WebSocket upgrades, HTTP-streaming and SSE streams, `/emulation`):
 * the `checkOrigin` hook decides when set (a hook that throws refuses, and is logged), otherwise the configured
 * patterns. Answers synchronously when there is no hook, so a WebSocket upgrade needs no extra turn.
 */
export class OriginPolicy {
  private readonly patterns: RegExp[];

  /**
   * `host.hooks` is read at every check, not kept: an embedder installs its hooks after the transports are built
   * (`RealtimeEngine.setHooks`, before start), and the check must be theirs.
   */
  constructor(
    allowedOrigins: readonly string[],
    private readonly host: { readonly hooks: Pick<RealtimeHooks, 'checkOrigin'> },
    private readonly logger: Logger,
  ) {
    this.patterns = compileOriginPatterns(allowedOrigins);
  }

  admits(request: IncomingMessage): boolean | Promise<boolean> {
    const origin = typeof request.headers.origin === 'string' ? request.headers.origin : undefined;
    const check = this.host.hooks.checkOrigin;
    if (check === undefined) return isOriginAllowed(origin, request, this.patterns);
    return Promise.resolve()
      .then(() => check(origin, request))
      .then(
        (allowed) => allowed === true,
        (error: unknown) => {
          this.logger.error({ error: String(error) }, 'checkOrigin failed');
          return false;
        },
      );
  }
}
