import { randomUUID } from 'node:crypto';
import { signHmacJwt } from '@parley/realtime';

/** Lifetimes fixed by the spec ("Authentication"): connection 15 minutes, subscription 24 hours. */
export const CONNECTION_TOKEN_TTL_SECONDS = 900;
export const SUBSCRIPTION_TOKEN_TTL_SECONDS = 86_400;

/** Server-only facts the engine needs when the connection arrives (Centrifugo `meta`, never sent to clients). */
export interface ConnectionMeta {
  company_id: string;
  channel_id: string | null;
  /**
   * The browser origin this token was granted to (the portal's page, checked against the granting request's Host):
   * the engine admits exactly that origin for this token, whatever the public URL says.
   */
  origin?: string;
}

/**
 * Signs the Centrifugo connection and subscription JWTs (HS256, RFC 7519 + RFC 7515 §3.1). `sub` is the visitor's
 * X-Session-Id (docs/design.md "Webchat REST") or, for a session acting for a verified visitor, that visitor's key
 * (webchat/visitor.ts), one subject for every device of theirs; the engine refuses a subscription token whose `sub`
 * or `channel` does not match the connection (docs/protocol.md "Subscription token").
 */
export class RealtimeTokenSigner {
  constructor(private readonly secret: string) {}

  connectionToken(subject: string, meta: ConnectionMeta, nowSeconds = Math.floor(Date.now() / 1000)): string {
    return this.sign({
      sub: subject,
      meta,
      iat: nowSeconds,
      exp: nowSeconds + CONNECTION_TOKEN_TTL_SECONDS,
      jti: randomUUID(),
    });
  }

  subscriptionToken(subject: string, channel: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
    return this.sign({
      sub: subject,
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
