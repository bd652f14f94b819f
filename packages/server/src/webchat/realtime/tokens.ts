import { randomUUID } from 'node:crypto';
import { signHmacJwt } from '@parley/realtime';

/** Lifetimes fixed by the spec ("Authentication"): connection 15 minutes, subscription 24 hours. */
export const CONNECTION_TOKEN_TTL_SECONDS = 900;
export const SUBSCRIPTION_TOKEN_TTL_SECONDS = 86_400;

/** Server-only facts the engine needs when the connection arrives (Centrifugo `meta`, never sent to clients). */
export interface ConnectionMeta {
  company_id: string;
  channel_id: string | null;
}

/**
 * Signs the Centrifugo connection and subscription JWTs (HS256, RFC 7519 + RFC 7515 §3.1). `sub` is always the
 * visitor's X-Session-Id (DESIGN.md "Details fixed for interoperability"); the engine refuses a subscription
 * token whose `sub` or `channel` does not match the connection (research/centrifuge-protocol.md §4.2).
 */
export class RealtimeTokenSigner {
  constructor(private readonly secret: string) {}

  connectionToken(
    sessionId: string,
    meta: ConnectionMeta,
    nowSeconds = Math.floor(Date.now() / 1000),
  ): string {
    return this.sign({
      sub: sessionId,
      meta,
      iat: nowSeconds,
      exp: nowSeconds + CONNECTION_TOKEN_TTL_SECONDS,
      jti: randomUUID(),
    });
  }

  subscriptionToken(sessionId: string, channel: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
    return this.sign({
      sub: sessionId,
      channel,
      iat: nowSeconds,
      exp: nowSeconds + SUBSCRIPTION_TOKEN_TTL_SECONDS,
      jti: randomUUID(),
    });
  }

  private sign(claims: Record<string, unknown>): string {
    return signHmacJwt(claims, this.secret, 'HS256');
  }
}
