import { createHash, createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';

/** A nonce is good for the window it was made in and the next one: 5 to 10 minutes. */
export const NONCE_WINDOW_SECONDS = 300;

/**
 * Server-provided DPoP nonces (RFC 9449 §8 at the token endpoint, §9 on protected routes), stateless and the same
 * on every node: a nonce is a time window and an HMAC of it, keyed by a hash of the active signing key, which every
 * node already shares (oauth/signing-keys.ts). No store round trip per request; after a signing-key rotation the
 * old nonces stop working and the client is simply handed a new one (`use_dpop_nonce`), as §8 expects.
 */
export class DpopNonces {
  private cachedKey?: { source: KeyObject; secret: Buffer };

  constructor(
    /** The private key of the active signing key (SigningKeyStore.signingKey().privateKey). */
    private readonly signingKey: () => KeyObject,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The nonce to hand out now (`DPoP-Nonce` header). */
  current(): string {
    return this.nonceFor(this.window());
  }

  /** Whether a proof's `nonce` was made by this cluster in the current or the previous window. */
  accepts(nonce: string | undefined): boolean {
    if (nonce === undefined) return false;
    const window = this.window();
    return [window, window - 1].some((w) => equal(nonce, this.nonceFor(w)));
  }

  private window(): number {
    return Math.floor(this.clock() / 1000 / NONCE_WINDOW_SECONDS);
  }

  private nonceFor(window: number): string {
    const tag = createHmac('sha256', this.secret()).update(`dpop-nonce|${window}`).digest('base64url');
    return `${window.toString(36)}.${tag.slice(0, 22)}`;
  }

  private secret(): Buffer {
    const source = this.signingKey();
    if (this.cachedKey?.source !== source) {
      const der = source.export({ format: 'der', type: 'pkcs8' });
      this.cachedKey = {
        source,
        secret: createHash('sha256').update('dpop-nonce-key|').update(der).digest(),
      };
    }
    return this.cachedKey.secret;
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
