import type { IncomingMessage } from 'node:http';

/**
 * The client address of a raw request, as Fastify's `request.ip` gives it for a routed one: the socket's peer, or
 * with `trustProxy` (PARLEY_TRUST_PROXY, which trusts every hop) the first address of `X-Forwarded-For` — the
 * client as the outermost proxy saw it. For the WebSocket upgrades and connection caps that never reach a route.
 */
export function clientAddressOf(request: IncomingMessage, trustProxy: boolean): string {
  const forwarded = trustProxy ? request.headers['x-forwarded-for'] : undefined;
  const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim();
  return first || request.socket.remoteAddress || 'unknown';
}
