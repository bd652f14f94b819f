import type { IncomingMessage } from 'node:http';

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
